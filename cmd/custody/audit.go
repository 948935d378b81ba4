package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/postgres"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/verify"
)

const auditSynopsis = "custody audit --log URL|DIR [--state FILE] [--key VKEY] [--witness-key VKEY]... [--witness-quorum N]\n       custody audit --config FILE [--state-dir DIR]"

// runAudit is `custody audit`: one log (--log), or, with --config, every
// log shard the config's index lists (each replica's log, at the URL it
// registered, with the key it registered), remembering each one's
// checkpoint in --state-dir. Exit 0 clean, 1 tampered (or unreadable),
// 2 usage error.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("audit", stderr)
	logLoc := fs.String("log", "", "the log at `URL|DIR`: a directory or an http(s) URL of its /log/ root")
	state := fs.String("state", "", "`FILE` remembering the last clean checkpoint; created if absent, updated when clean")
	key := fs.String("key", "", "the log's verifier key `VKEY`, or a file holding it (pin it out of band); none: the key the log publishes")
	cfgPath := fs.String("config", "", "audit every log shard the index of the config `FILE` lists, instead of one --log")
	stateDir := fs.String("state-dir", "", "with --config: the `DIR` of one state file per shard")
	wp := witnessFlags(fs)
	withSynopsis(fs, auditSynopsis, "Audits a whole log from its public files: the checkpoint's signature, every entry hashed into\nthe signed root, and consistency with the checkpoint --state remembers.",
		"0  clean (and --state updated)",
		"1  tampered, or unreadable (the reason on stderr; --state kept)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return usageError(stderr, "audit takes no arguments, got %q", fs.Args())
	case *cfgPath != "" && (*logLoc != "" || *state != "" || *key != "" || len(wp.keys) > 0 || *wp.quorum != 0):
		return usageError(stderr, "audit --config audits every shard with the keys the index lists; it takes no --log, --state, --key or --witness-*")
	case *cfgPath == "" && *stateDir != "":
		return usageError(stderr, "--state-dir goes with --config; one log takes --state")
	case *cfgPath != "":
		return auditShards(ctx, *cfgPath, *stateDir, stdout, stderr)
	case *logLoc == "":
		return usageError(stderr, "audit needs --log URL|DIR or --config FILE (see custody audit --help)")
	}
	policy, err := wp.policy()
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: %v\n", err)
		return exitUsage
	}
	return auditLog(ctx, *logLoc, *key, *state, verify.Options{Witnesses: policy}, stdout, stderr)
}

// auditLog audits the log at loc and prints the outcome.
func auditLog(ctx context.Context, loc, key, state string, opts verify.Options, stdout, stderr io.Writer) int {
	src, err := verify.OpenSource(loc)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: %v\n", err)
		return exitUsage
	}
	v, err := verifierFor(ctx, key, src, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: %v\n", err)
		if key != "" {
			return exitUsage
		}
		return exitFailed
	}
	rep, err := verify.AuditWith(ctx, src, v, opts, state)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "clean: log %s, %d leaves, root %x", rep.Origin, rep.Size, rep.Root)
	if rep.PreviousSize > 0 {
		fmt.Fprintf(stdout, ", consistent with the %d leaves of the last audit", rep.PreviousSize)
	}
	fmt.Fprintf(stdout, " (%s)\n", rep.Duration.Round(1e6))
	if rep.ConfigLeaves > 0 {
		fmt.Fprintf(stdout, "config leaves: %d, chained, the last at index %d; every transaction names one before it\n", rep.ConfigLeaves, rep.LastConfigLeaf)
	}
	if opts.Witnesses.Quorum > 0 {
		fmt.Fprintf(stdout, "checkpoint cosigned by %s (quorum %d)\n", strings.Join(rep.Cosigners, ", "), opts.Witnesses.Quorum)
	}
	return exitOK
}

// auditShards audits every log shard the config's index lists; the exit
// code is the worst of theirs.
func auditShards(ctx context.Context, cfgPath, stateDir string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: bad configuration:\n%v\n", err)
		return exitUsage
	}
	var idx index.Index
	if cfg.Index.Backend == "postgres" {
		idx, err = postgres.Open(ctx, cfg.Index.DSN)
	} else {
		idx, err = sqlite.Open(ctx, filepath.Join(cfg.DataDir, "index.db"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: opening the index: %v\n", err)
		return exitFailed
	}
	defer idx.Close()
	shards, err := idx.Shards(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: listing shards: %v\n", err)
		return exitFailed
	}
	if len(shards) == 0 {
		fmt.Fprintln(stderr, "custody audit: the index lists no log shard")
		return exitFailed
	}
	if stateDir != "" {
		if err := os.MkdirAll(stateDir, 0o700); err != nil {
			fmt.Fprintf(stderr, "custody audit: %v\n", err)
			return exitFailed
		}
	}
	code := exitOK
	for _, s := range shards {
		state := ""
		if stateDir != "" {
			state = filepath.Join(stateDir, strings.NewReplacer("/", "_", ":", "_").Replace(s.Origin)+".state")
		}
		fmt.Fprintf(stdout, "shard %s (%s)\n", s.Origin, s.URL)
		if c := auditLog(ctx, strings.TrimRight(s.URL, "/")+"/log", s.VerifierKey, state, verify.Options{}, stdout, stderr); c > code {
			code = c
		}
	}
	return code
}
