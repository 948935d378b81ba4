package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// options are the command line.
type options struct {
	Short      bool
	WriteDoc   bool
	Doc        string
	Proxy      proxyParams
	OpenDur    time.Duration
	StrDur     time.Duration
	TokenDur   time.Duration
	TokenMax   int64
	TiktokDir  string
	NoNode     bool
	LedgerDur  time.Duration
	Appenders  int
	AuditN     int
	DiskDur    time.Duration
	Skip       map[string]bool
	RepoRoot   string
	ProfileArg string
	Layouts    []layout
}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.BoolVar(&o.Short, "short", false, "smoke run: every benchmark at tiny sizes (under a minute)")
	fs.BoolVar(&o.WriteDoc, "write-doc", false, "write the results into docs/BENCHMARKS.md")
	fs.StringVar(&o.Doc, "doc", "", "the document -write-doc writes (default: docs/BENCHMARKS.md in the repository)")
	rounds := fs.Int("rounds", 6, "interleaved rounds of the proxy modes")
	modes := fs.String("modes", "A,B,C,D,E,F", "comma-separated proxy modes to measure (A direct and B bare always are)")
	lays := fs.String("layouts", "one-core,two-core", "comma-separated layouts: one-core (each proxy alone on the last CPU, GOMAXPROCS=1; the load generator and the simulator on the others), two-core (unpinned)")
	conc := fs.Int("conc", 64, "closed-loop concurrency (saturation)")
	sat := fs.Duration("sat", 2*time.Second, "closed-loop time per mode per round")
	rate := fs.Float64("rate", 1000, "open-loop request rate (lowered if saturation is under 1.5x it)")
	fs.DurationVar(&o.OpenDur, "open", 3*time.Second, "open-loop time per mode per round (non-streaming)")
	fs.DurationVar(&o.StrDur, "stream", 1500*time.Millisecond, "open-loop time per mode per round (streaming)")
	fs.StringVar(&o.ProfileArg, "profile", "", "write a CPU profile of mode F (else E, or -profile-mode) at saturation, per layout: FILE.pprof becomes FILE.one-core.pprof (and .allocs, .trace)")
	profDur := fs.Duration("profile-time", 10*time.Second, "how long the profile runs")
	baseline := fs.String("baseline", "", "also measure `custody serve` built at this git ref (e.g. main) as mode G, beside F")
	serveYAML := fs.String("serve-yaml", "", "extra top-level YAML for mode F's config (an experiment: F with it, G with -baseline HEAD without), e.g. 'ledger: {batch_max_age: 50ms}'")
	profMode := fs.String("profile-mode", "", "the mode -profile profiles (default F, else E; B to F)")
	fs.DurationVar(&o.TokenDur, "token-time", 3*time.Second, "time per encoding per counter")
	fs.StringVar(&o.TiktokDir, "tiktoken-dir", filepath.Join(os.TempDir(), "tk"), "where npm's tiktoken is (installed if missing)")
	fs.BoolVar(&o.NoNode, "no-node", false, "skip the npm tiktoken comparison")
	fs.DurationVar(&o.LedgerDur, "ledger-time", 5*time.Second, "time of the ledger append benchmark")
	fs.IntVar(&o.Appenders, "appenders", 64, "concurrent ledger appenders")
	fs.IntVar(&o.AuditN, "audit-leaves", 1_000_000, "leaves in the audited log")
	fs.DurationVar(&o.DiskDur, "disk-time", 2*time.Second, "time of the disk sweep at each rate")
	keep := fs.Bool("keep", false, "keep the child processes' logs and data directories (printed)")
	skip := fs.String("skip", "", "comma-separated benchmarks to skip: proxies, disk, tokens, ledger, audit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Skip = map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.Skip[s] = true
		}
	}
	o.Proxy = proxyParams{Rounds: *rounds, Conc: *conc, SatDur: *sat, Rate: *rate, Profile: o.ProfileArg,
		BaselineRef: *baseline, ServeYAML: *serveYAML, ProfileDur: *profDur, ProfileMode: strings.ToUpper(*profMode), Log: stderr, KeepLogs: *keep, Modes: map[string]bool{}}
	for _, k := range strings.Split(*modes, ",") {
		k = strings.ToUpper(strings.TrimSpace(k))
		if k == "" {
			continue
		}
		if !slices.ContainsFunc(allModes, func(m struct{ Key, Name string }) bool { return m.Key == k }) {
			return nil, fmt.Errorf("-modes: unknown mode %q (A to F)", k)
		}
		o.Proxy.Modes[k] = true
	}
	known := layouts(runtime.NumCPU())
	for _, n := range strings.Split(*lays, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		l, ok := known[n]
		if !ok {
			return nil, fmt.Errorf("-layouts: unknown layout %q (one-core, two-core)", n)
		}
		if l.TargetCPUs != "" && runtime.NumCPU() < 2 {
			return nil, fmt.Errorf("-layouts: %s needs at least 2 CPUs, this machine has %d", n, runtime.NumCPU())
		}
		o.Layouts = append(o.Layouts, l)
	}
	if o.Short {
		// Tiny sizes, except where a flag says otherwise.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		short := func(name string, apply func()) {
			if !set[name] {
				apply()
			}
		}
		short("rounds", func() { o.Proxy.Rounds = 1 })
		short("conc", func() { o.Proxy.Conc = 16 })
		short("sat", func() { o.Proxy.SatN = 200 })
		short("profile-time", func() { o.Proxy.ProfileDur = time.Second })
		short("open", func() { o.OpenDur = 200 * time.Millisecond })
		short("stream", func() { o.StrDur = 100 * time.Millisecond })
		short("token-time", func() { o.TokenDur, o.TokenMax = 100*time.Millisecond, 64<<10 })
		short("ledger-time", func() { o.LedgerDur = 500 * time.Millisecond })
		short("audit-leaves", func() { o.AuditN = 20_000 })
		short("disk-time", func() { o.DiskDur = 20 * time.Millisecond })
	}
	if o.Proxy.Rounds < 1 || o.Proxy.Conc < 1 || o.Proxy.Rate <= 0 {
		return nil, errors.New("-rounds, -conc and -rate must be positive")
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	o.RepoRoot = root
	if o.Doc == "" {
		o.Doc = filepath.Join(root, "docs", "BENCHMARKS.md")
	}
	return o, nil
}

// repoRoot is the directory holding go.mod, from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the custody repository (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// results is everything one run measured.
type results struct {
	Machine machine
	Opts    *options
	Proxy   []*proxyReport // one per layout
	Disk    []diskPoint
	Tokens  []tokenResult
	Ledger  *ledgerResult
	Audit   *ledgerResult
	Took    time.Duration
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseOptions(args, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	res, err := measure(ctx, o, os.Stderr)
	if err != nil {
		return err
	}
	report := res.markdown()
	fmt.Fprint(stdout, report)
	if o.WriteDoc {
		if err := writeDoc(o.Doc, report); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", o.Doc)
	}
	return nil
}

// measure runs every benchmark not skipped.
func measure(ctx context.Context, o *options, log io.Writer) (*results, error) {
	start := time.Now()
	res := &results{Opts: o, Machine: describeMachine(o.RepoRoot)}
	if !o.Skip["proxies"] {
		if o.Proxy.OpenN == 0 {
			o.Proxy.OpenN, o.Proxy.StrN = -1, -1 // set from the rate after calibration
		}
		o.Proxy.openDur, o.Proxy.strDur = o.OpenDur, o.StrDur
		if o.Proxy.Modes["F"] {
			bin, cleanup, err := buildCustody(o.RepoRoot)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			o.Proxy.Custody = bin
		}
		if o.Proxy.BaselineRef != "" {
			bin, cleanup, err := buildCustodyAt(o.RepoRoot, o.Proxy.BaselineRef)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			o.Proxy.Baseline = bin
		}
		for _, lay := range o.Layouts {
			rep, err := runProxies(ctx, o.Proxy, lay)
			if err != nil {
				return nil, fmt.Errorf("proxies (%s): %w", lay.Name, err)
			}
			res.Proxy = append(res.Proxy, rep)
		}
	}
	if !o.Skip["disk"] {
		pts, err := runDiskSweep(ctx, o.DiskDur)
		if err != nil {
			return nil, fmt.Errorf("disk: %w", err)
		}
		for _, p := range pts {
			fmt.Fprintf(log, "disk: %.0f syncs/s  p50 %v\n", p.Rate, p.P50)
		}
		res.Disk = pts
	}
	if !o.Skip["tokens"] {
		docs, size, err := corpus(o.RepoRoot, o.TokenMax)
		if err != nil {
			return nil, fmt.Errorf("tokens: reading the corpus: %w", err)
		}
		dir := o.TiktokDir
		if o.NoNode {
			dir = ""
		}
		if res.Tokens, err = runTokens(ctx, docs, size, o.TokenDur, dir, log); err != nil {
			return nil, fmt.Errorf("tokens: %w", err)
		}
	}
	if !o.Skip["ledger"] {
		r, err := runLedgerAppend(ctx, o.Appenders, o.LedgerDur)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		fmt.Fprintf(log, "ledger: %d appenders, %.0f durable leaves/s\n", r.Appenders, r.LeavesPerSec)
		res.Ledger = &r
	}
	if !o.Skip["audit"] {
		r, err := runAudit(ctx, o.AuditN, log)
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		fmt.Fprintf(log, "audit: %d leaves in %v\n", r.AuditLeaves, r.AuditTime.Round(time.Millisecond))
		res.Audit = &r
	}
	res.Took = time.Since(start)
	return res, nil
}
