package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/postgres"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger/ledgercli"
)

// runAudit is `custody audit`: one log (--log, see ledger/ledgercli), or,
// with --config and no --log, every log shard the config's index lists
// (each replica's log, at the URL it registered, with the key it
// registered), remembering each one's checkpoint in --state-dir.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfgPath, stateDir, rest := "", "", args[:0:0]
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case (a == "--config" || a == "-config" || a == "--state-dir" || a == "-state-dir") && i+1 < len(args):
			if strings.Contains(a, "config") {
				cfgPath = args[i+1]
			} else {
				stateDir = args[i+1]
			}
			i++
		default:
			rest = append(rest, a)
		}
	}
	if cfgPath == "" {
		return ledgercli.Audit(ctx, rest, stdout, stderr)
	}
	if len(rest) > 0 {
		return usageError(stderr, "audit --config audits every shard; it takes no --log (got %q)", rest)
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: bad configuration:\n%v\n", err)
		return 2
	}
	var idx index.Index
	if cfg.Index.Backend == "postgres" {
		idx, err = postgres.Open(ctx, cfg.Index.DSN)
	} else {
		idx, err = sqlite.Open(ctx, filepath.Join(cfg.DataDir, "index.db"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: opening the index: %v\n", err)
		return 1
	}
	defer idx.Close()
	shards, err := idx.Shards(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: listing shards: %v\n", err)
		return 1
	}
	if len(shards) == 0 {
		fmt.Fprintln(stderr, "custody audit: the index lists no log shard")
		return 1
	}
	if stateDir != "" {
		if err := os.MkdirAll(stateDir, 0o700); err != nil {
			fmt.Fprintf(stderr, "custody audit: %v\n", err)
			return 1
		}
	}
	code := 0
	for _, s := range shards {
		a := []string{"--log", strings.TrimRight(s.URL, "/") + "/log", "--key", s.VerifierKey}
		if stateDir != "" {
			a = append(a, "--state", filepath.Join(stateDir, strings.NewReplacer("/", "_", ":", "_").Replace(s.Origin)+".state"))
		}
		fmt.Fprintf(stdout, "shard %s (%s)\n", s.Origin, s.URL)
		if c := ledgercli.Audit(ctx, a, stdout, stderr); c > code {
			code = c
		}
	}
	return code
}
