//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-gateway/custody/canary"
)

// runCanary is `custody canary [--config FILE] [--route MODEL/PROVIDER]`: every
// probe once on every route (or the one named model/provider), a table,
// and exit 1 if any failed. The probes go through custody's own pipeline,
// on throwaway stores (a running serve owns the data dir's ledger; its
// scheduler records canary traffic there), but against the identity
// enrollments in the data dir, which a first run creates.
func runCanary(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("canary", stderr)
	cfgPath := fs.String("config", "", "read the config from `FILE` (YAML); none: the embedded defaults")
	routeName := fs.String("route", "", "probe only the route `MODEL/PROVIDER` (as in the table)")
	withSynopsis(fs, "custody canary [--config FILE] [--route MODEL/PROVIDER]",
		"Runs every canary probe once on every route (or one) through custody's own pipeline and prints a\n"+
			"table. It uses throwaway stores (a running serve owns the ledger), but the identity enrollments\n"+
			"in the data dir, which a first run creates.",
		"0  every probe passed",
		"1  a probe failed (its code in the table), or a bad config")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "canary takes no arguments, got %q", fs.Args())
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "custody: bad configuration:\n%v\n", err)
		return 1
	}
	enroll := filepath.Join(cfg.DataDir, "canary")
	tmp, err := os.MkdirTemp("", "custody-canary-")
	if err != nil {
		fmt.Fprintf(stderr, "custody canary: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	cfg.DataDir, cfg.Listen, cfg.Index.Backend = tmp, "127.0.0.1:0", "sqlite"
	cfg.Canaries.Interval, cfg.Canaries.IgnorePathChanges = 0, true
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := startApp(ctx, cfg, logger, &app{simURLs: map[string]string{}, enrollDir: enroll})
	if err != nil {
		fmt.Fprintf(stderr, "custody canary: %v\n", err)
		return 1
	}
	defer a.close()
	runner := a.runner
	var reports []canary.Report
	if *routeName == "" {
		reports = runner.RunOnce(ctx)
	} else {
		for _, c := range a.gw.Load().Routes() {
			if c.Name() == *routeName {
				rep, err := runner.RunRoute(ctx, c.Model(), c.Index())
				if err != nil {
					fmt.Fprintf(stderr, "custody canary: %v\n", err)
					return 1
				}
				reports = append(reports, rep)
			}
		}
		if len(reports) == 0 {
			var names []string
			for _, c := range a.gw.Load().Routes() {
				names = append(names, c.Name())
			}
			return usageError(stderr, "no route %q (routes: %s)", *routeName, strings.Join(names, ", "))
		}
	}
	if err := canary.PrintTable(stdout, reports); err != nil {
		fmt.Fprintf(stderr, "custody canary: %v\n", err)
		return 1
	}
	if !canary.AllOK(reports) {
		return 1
	}
	return 0
}
