//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/eval"
	"github.com/custody-gateway/custody/gateway"
	"github.com/custody-gateway/custody/telemetry"
)

// runEval is `custody eval [--config FILE] [--suite NAME] [--route
// MODEL/PROVIDER] [--pin]`: the config's suites once through custody's
// own pipeline, a table, and exit 1 if a run is under its threshold. Like
// `custody canary`, it runs on throwaway stores (a running serve owns the
// data dir's ledger) but against the baselines and digest key in the data
// dir, which --pin writes.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval", stderr)
	cfgPath := fs.String("config", "", "read the config from `FILE` (YAML); none: the embedded defaults")
	suite := fs.String("suite", "", "run only the suite `NAME` (evals[].name)")
	routeName := fs.String("route", "", "run only on the route `MODEL/PROVIDER` (as in the table)")
	pin := fs.Bool("pin", false, "record each run as its suite's baseline on the route, passing or not")
	withSynopsis(fs, "custody eval [--config FILE] [--suite NAME] [--route MODEL/PROVIDER] [--pin]",
		"Runs the config's evaluation suites once through custody's own pipeline and prints a table, each\n"+
			"run against its threshold and its suite's baseline in the data dir (the first run records it;\n"+
			"--pin replaces it).",
		"0  every run met its threshold and its baseline",
		"1  a run is under its threshold or regressed from its baseline, or a bad config or suite")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "eval takes no arguments, got %q", fs.Args())
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "custody: bad configuration:\n%v\n", err)
		return 1
	}
	if len(cfg.Evals) == 0 {
		fmt.Fprintln(stderr, "custody eval: the config has no evals: nothing to run (see README, Evaluation suites)")
		return 1
	}
	var names []string
	for _, e := range cfg.Evals {
		names = append(names, e.Name)
	}
	if *suite != "" && !slices.Contains(names, *suite) {
		return usageError(stderr, "no suite %q (suites: %s)", *suite, strings.Join(names, ", "))
	}
	baselines := filepath.Join(cfg.DataDir, "eval")
	tmp, err := os.MkdirTemp("", "custody-eval-")
	if err != nil {
		fmt.Fprintf(stderr, "custody eval: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	cfg.DataDir, cfg.Listen, cfg.Index.Backend = tmp, "127.0.0.1:0", "sqlite"
	cfg.Canaries.Interval, cfg.Canaries.IgnorePathChanges = 0, true
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := startApp(ctx, cfg, logger, &app{simURLs: map[string]string{}, evalDir: baselines, evalOnDemand: true})
	if err != nil {
		fmt.Fprintf(stderr, "custody eval: %v\n", err)
		return 1
	}
	defer a.close()
	reports, err := a.evalRunner.RunOnce(ctx, eval.RunOptions{Suite: *suite, Route: *routeName, Pin: *pin})
	if errors.Is(err, eval.ErrNoMatch) {
		var routes []string
		for _, r := range a.gw.Load().Routes() {
			routes = append(routes, r.Name())
		}
		return usageError(stderr, "no suite covers route %q (routes: %s)", *routeName, strings.Join(routes, ", "))
	}
	if err != nil {
		fmt.Fprintf(stderr, "custody eval: %v\n", err)
		return 1
	}
	if err := eval.PrintTable(stdout, reports); err != nil {
		fmt.Fprintf(stderr, "custody eval: %v\n", err)
		return 1
	}
	if !eval.AllOK(reports) {
		return 1
	}
	return 0
}

// evals makes the eval runner of a gateway, on ctx: commit starts it,
// running every suite at once on the routes it covers (no policy that
// requires a suite uses a route before its first pass), then on each
// suite's interval, and on path changes. On a reload commit stops the
// previous runner first; the suites and routes it leaves unchanged keep
// their pass state (eval.Runner.Adopt). custody eval runs on demand
// only. suites are cfg.Evals' (eval.Suites).
func (a *app) evals(ctx context.Context, cfg *config.Config, suites []*eval.Suite, gw *gateway.Gateway, metrics *telemetry.Metrics) (*eval.Runner, error) {
	dir := a.evalDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "eval")
	}
	r, err := eval.New(ctx, eval.Config{Suites: suites, Routes: eval.Routes(gw.Routes()), Dir: dir,
		OnRun: func(rep eval.Report) string { return a.evalRun(gw, metrics, rep) }})
	if err != nil {
		return nil, fmt.Errorf("evals: %w", err)
	}
	return r, nil
}

// evalRun records a run: its ledger leaf (whose event the recorder puts
// on the timeline), the pass-ratio metric and a log line without case
// text.
func (a *app) evalRun(gw *gateway.Gateway, metrics *telemetry.Metrics, rep eval.Report) string {
	metrics.EvalPassRatio(rep.Suite, rep.Route, rep.Ratio)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := gw.RecordEval(ctx, rep.Transaction())
	if err != nil {
		a.logger.Error("recording an eval run", "suite", rep.Suite, "route", rep.Route, "err", err)
	}
	a.logger.Info("eval", "suite", rep.Suite, "route", rep.Route, "ok", rep.OK, "passed", rep.Passed, "total", rep.Total,
		"trigger", rep.Trigger, "path", rep.Path.String(), "failing", strings.Join(rep.Failing(), ","), "leaf", id)
	return id
}
