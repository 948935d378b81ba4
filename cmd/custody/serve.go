//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/canary"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/console"
	"github.com/custody-gateway/custody/contamination"
	"github.com/custody-gateway/custody/gateway"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/postgres"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/notify"
	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/telemetry"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
	"github.com/custody-gateway/custody/verify"
)

// runServe runs the gateway until ctx is cancelled.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", stderr)
	cfgPath := fs.String("config", "", "config file (YAML); none: the embedded defaults")
	listen := fs.String("listen", "", "listen address, overriding the config's `listen`")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "serve takes no arguments, got %q", fs.Args())
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "custody: refusing to start: bad configuration:\n%v\n", err)
		return 1
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	app, err := start(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "custody: %v%s\n", err, corruptJournalAdvice(err, cfg.DataDir))
		return 1
	}
	defer app.close()
	printBanner(stdout, cfg, app)
	if *cfgPath != "" {
		stopReload := app.reloadOnHUP(*cfgPath, *listen, logger)
		defer stopReload()
	}
	code := serveUntilDone(ctx, app.server, app.listener, stderr)
	return code
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default()
	}
	return config.Load(path)
}

// app is a running gateway and what it owns.
type app struct {
	cfg          *config.Config // the config in force; changed only by reload
	logger       *slog.Logger
	gw           atomic.Pointer[gateway.Gateway] // swapped on reload
	server       *http.Server
	listener     net.Listener
	log          *ledger.Log
	index        index.Index
	recorder     *gateway.LedgerRecorder
	simURLs      map[string]string
	adminKeyFile string
	notifier     atomic.Pointer[notify.Notifier] // of the config in force
	contam       *contamination.Detector
	stopCanaries context.CancelFunc
	runner       *canary.Runner // of the gateway in force
	tracer       *telemetry.Tracer
	logSource    verify.LogSource // the ledger's own files, for the console's receipt checks
	// enrollDir overrides where identity enrollments live (the canary
	// command runs on throwaway stores but the serve's enrollments).
	enrollDir string
	closers   []func()
}

func (a *app) close() {
	if a.stopCanaries != nil {
		a.stopCanaries()
	}
	defer func() {
		if n := a.notifier.Load(); n != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			n.Close(ctx)
			cancel()
		}
	}()
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// start opens everything the config names, in dependency order, and
// undoes what it opened if a later step fails.
func start(ctx context.Context, cfg *config.Config, logger *slog.Logger) (a *app, err error) {
	return startApp(ctx, cfg, logger, &app{simURLs: map[string]string{}})
}

func startApp(ctx context.Context, cfg *config.Config, logger *slog.Logger, a *app) (_ *app, err error) {
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	if len(cfg.AdminKeys) == 0 && len(cfg.AdminKeySHA256) == 0 {
		key, path, err := adminKey(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		cfg.AdminKeys, a.adminKeyFile = []string{key}, path
	}

	a.log, err = ledger.Open(ctx, ledger.Config{Dir: filepath.Join(cfg.DataDir, "ledger"), Origin: cfg.Ledger.Origin,
		KeyFile: cfg.Ledger.KeyFile, BatchMaxAge: cfg.Ledger.BatchMaxAge, BatchMaxSize: cfg.Ledger.BatchMaxSize,
		JournalSegmentSize: cfg.Ledger.SegmentBytes, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("opening the ledger: %w", err)
	}
	a.closers = append(a.closers, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.log.Close(cctx); err != nil {
			logger.Error("closing the ledger", "err", err)
		}
	})

	switch cfg.Index.Backend {
	case "postgres":
		a.index, err = postgres.Open(ctx, cfg.Index.DSN)
	default:
		a.index, err = sqlite.Open(ctx, filepath.Join(cfg.DataDir, "index.db"))
	}
	if err != nil {
		return nil, fmt.Errorf("opening the %s index: %w", cfg.Index.Backend, err)
	}
	a.closers = append(a.closers, func() { a.index.Close() })

	a.listener, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	a.listener = gateway.LimitListener(a.listener, cfg.Limits.MaxConnections)
	a.closers = append(a.closers, func() { a.listener.Close() })

	tenantIDs := make([]string, len(cfg.Tenants))
	for i, t := range cfg.Tenants {
		tenantIDs[i] = t.ID
	}
	publicURL := cfg.Ledger.PublicURL
	if publicURL == "" {
		publicURL = "http://" + a.listener.Addr().String()
	}
	a.recorder, err = gateway.NewLedgerRecorder(ctx, a.log, a.index, tenantIDs, strings.TrimRight(publicURL, "/"), logger)
	if err != nil {
		return nil, fmt.Errorf("reconciling the index with the log: %w", err)
	}
	a.closers = append(a.closers, a.recorder.Close)

	a.cfg, a.logger = cfg, logger
	if a.tracer, err = telemetry.NewTracer(ctx); err != nil { // nil unless OTEL_EXPORTER_OTLP_* is set
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if a.tracer != nil {
		a.closers = append(a.closers, func() {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := a.tracer.Shutdown(cctx); err != nil {
				logger.Warn("flushing traces", "err", err)
			}
		})
	}
	if a.logSource, err = verify.OpenSource(filepath.Join(cfg.DataDir, "ledger")); err != nil {
		return nil, fmt.Errorf("opening the log for receipt checks: %w", err)
	}
	gw, err := a.buildGateway(cfg)
	if err != nil {
		return nil, err
	}
	a.gw.Store(gw)
	a.server = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.gw.Load().ServeHTTP(w, r) }),
		ReadHeaderTimeout: cfg.Limits.ReadHeaderTimeout,
		IdleTimeout:       cfg.Limits.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return a, nil
}

// buildGateway makes the gateway of cfg on the app's stores.
func (a *app) buildGateway(cfg *config.Config) (*gateway.Gateway, error) {
	clients, err := a.startUpstreams(cfg)
	if err != nil {
		return nil, err
	}
	models := make([]string, len(cfg.Models))
	for i, m := range cfg.Models {
		models[i] = m.Name
	}
	metrics := telemetry.NewMetrics(models)
	metrics.LedgerSyncs(a.log.JournalSyncs)
	a.recorder.OnRecord = func(*custody.Transaction) { metrics.LedgerLeaf() }
	a.recorder.OnEvent = a.notify
	a.setWebhooks(cfg)
	var gw *gateway.Gateway // the console asks it about admin keys, once it exists
	var runner *canary.Runner
	// One admin-key failure limiter for the console and the admin API,
	// kept across reloads.
	authFailures := gateway.NewAuthFailures(cfg.Limits.AuthFailuresPerMinute, nil)
	if old := a.gw.Load(); old != nil {
		authFailures = old.AuthFailures()
	}
	con, err := console.New(console.Config{
		IsAdminKey:    func(key string) bool { return gw.IsAdminKey(key) },
		Index:         a.index,
		Log:           a.log,
		VerifyReceipt: console.LedgerVerifier(a.logSource, a.log.Verifier()),
		Health:        func() []console.RouteHealth { return routeHealth(runner) },
		Logger:        a.logger,
		LoginLimiter:  authFailures,
		Models:        models,
	})
	if err != nil {
		return nil, err
	}
	opts := gateway.Options{AuthFailures: authFailures, Config: cfg, Clients: clients, Recorder: a.recorder, Logger: a.logger,
		Contamination: gateway.Detector{D: a.detector(cfg)},
		Observer:      metrics,
		KnownPaths:    a.knownPaths(),
		Evidence:      &gateway.Evidence{Recorder: a.recorder, Index: a.index, Log: a.log},
		Mounts:        map[string]http.Handler{"GET /metrics": metrics.Handler(), console.Prefix: con},
	}
	if cfg.Debug.PProf {
		opts.Mounts[pprofPrefix] = pprofMount(func() *gateway.Gateway { return gw })
	}
	if a.tracer != nil { // a nil *telemetry.Tracer in the interface would not be nil
		opts.Tracer = a.tracer
	}
	if cfg.Index.Backend == "postgres" {
		// Replicas share the index: the replay check must too.
		opts.SharedReplay = a.recorder.Claim
	}
	if gw, err = gateway.New(opts); err != nil {
		return nil, err
	}
	if runner, err = a.canaries(cfg, gw, metrics); err != nil {
		return nil, err
	}
	gw.SetCanaries(runner)
	a.runner = runner
	gw.ProbeProviders() // in the background: logged, and shown by /readyz
	return gw, nil
}

// routeHealth is the console's view of the canaries' last runs.
func routeHealth(r *canary.Runner) []console.RouteHealth {
	if r == nil {
		return nil
	}
	var out []console.RouteHealth
	for _, rep := range r.Last() {
		_, provider, _ := strings.Cut(rep.Name, "/")
		for _, p := range rep.Results {
			detail := p.Evidence // skipped and inconclusive are not failures: say which they are
			if o := p.Outcome(); o != canary.StatusOK && o != canary.StatusFailed {
				detail = string(o) + ": " + detail
			}
			out = append(out, console.RouteHealth{Model: rep.Model, Route: rep.Route, Provider: provider,
				Probe: p.Probe, OK: p.Outcome() != canary.StatusFailed, Detail: detail, Checked: rep.Time})
		}
	}
	return out
}

// setWebhooks starts a notifier for cfg's webhooks, retiring the old one
// (it finishes its deliveries in the background).
func (a *app) setWebhooks(cfg *config.Config) {
	var hooks []notify.Hook
	for _, h := range cfg.Webhooks {
		hooks = append(hooks, notify.Hook{URL: h.URL, Secret: h.Secret, Events: h.Events})
	}
	old := a.notifier.Swap(notify.New(notify.Config{Hooks: hooks, Logger: a.logger}))
	if old != nil {
		go old.Close(context.Background())
	}
}

func (a *app) notify(e index.Event) { a.notifier.Load().Notify(e) }

// detector is the contamination detector; it outlives reloads, so that
// prompts remembered before a reload still protect the responses after.
func (a *app) detector(cfg *config.Config) *contamination.Detector {
	if a.contam == nil {
		a.contam = contamination.New(contamination.Config{Warmup: cfg.Checks.ContaminationWarmup,
			MaxPrompts: cfg.Checks.ContaminationMaxPrompts})
	}
	return a.contam
}

// knownPaths seeds path-change detection from the index's history.
func (a *app) knownPaths() []gateway.Path {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, err := a.index.Events(ctx, index.EventQuery{Type: index.EventPathChange, Limit: index.MaxLimit})
	if err != nil {
		a.logger.Warn("reading past path changes; every path will be new once", "err", err)
		return nil
	}
	var paths []gateway.Path
	for _, e := range evs {
		if p, ok := gateway.ParsePath(e); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

// canaries starts the canary runner of a gateway: scheduled when
// canaries.interval is set, triggered by path changes in any case. A
// reload stops the previous runner.
func (a *app) canaries(cfg *config.Config, gw *gateway.Gateway, metrics *telemetry.Metrics) (*canary.Runner, error) {
	if a.stopCanaries != nil {
		a.stopCanaries()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := canary.New(ctx, canary.Config{
		Routes: gw.CanaryRoutes(), Probes: cfg.Canaries.Probes, Interval: cfg.Canaries.Interval,
		NeedleMaxTokens: max(cfg.Canaries.NeedleMaxTokens, 0),
		Dir:             a.canaryDir(cfg),
		AddSecret:       a.contam.AddSecret, RemoveSecret: a.contam.RemoveSecret,
		OnStatus: metrics.Canary,
		OnEvent:  func(e canary.Event) { a.canaryEvent(e) },
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("canaries: %w", err)
	}
	for _, w := range r.Plan() {
		a.logger.Warn("canary probe cannot run: skipped", "route", w.Route, "probe", w.Probe, "reason", w.Reason)
	}
	if cfg.Canaries.Interval > 0 {
		go r.Run(ctx)
	}
	a.stopCanaries = cancel
	return r, nil
}

func (a *app) canaryDir(cfg *config.Config) string {
	if a.enrollDir != "" {
		return a.enrollDir
	}
	return filepath.Join(cfg.DataDir, "canary")
}

// canaryEvent puts a canary's failure, quarantine or recovery on the
// event timeline.
func (a *app) canaryEvent(e canary.Event) {
	ev := index.Event{Time: e.Time, Type: index.EventCanary, Model: e.Model, Provider: e.Name,
		Detail: strings.TrimSpace(string(e.Kind) + " " + e.Probe + " " + e.Detail)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.index.AddEvents(ctx, ev); err != nil {
		a.logger.Error("recording a canary event", "err", err)
	}
	a.notify(ev)
	a.logger.Info("canary", "kind", e.Kind, "route", e.Name, "probe", e.Probe, "detail", e.Detail)
}

// reloadOnHUP reloads the config file on SIGHUP: a valid file replaces
// the gateway (tenants, keys, providers, models, policies, limits) for new
// requests while requests in flight finish on the old one; a bad file, or
// one that changes what cannot change while running (listen, data_dir,
// index, ledger), keeps the old config and says why.
func (a *app) reloadOnHUP(path, listen string, logger *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				if err := a.reload(path, listen); err != nil {
					logger.Error("config reload refused; the old config stays in force", "file", path, "err", err.Error())
				} else {
					logger.Info("config reloaded", "file", path)
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

func (a *app) reload(path, listen string) error {
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	if listen != "" {
		cfg.Listen = listen
	}
	old := a.cfg
	var fixed []string
	if cfg.Listen != old.Listen {
		fixed = append(fixed, "listen")
	}
	if cfg.DataDir != old.DataDir {
		fixed = append(fixed, "data_dir")
	}
	if cfg.Index != old.Index {
		fixed = append(fixed, "index")
	}
	if cfg.Ledger != old.Ledger {
		fixed = append(fixed, "ledger")
	}
	if len(fixed) > 0 {
		return fmt.Errorf("%s cannot change while running (restart instead)", strings.Join(fixed, ", "))
	}
	if len(cfg.AdminKeys) == 0 && len(cfg.AdminKeySHA256) == 0 {
		cfg.AdminKeys = old.AdminKeys // the generated key
	}
	gw, err := a.buildGateway(cfg)
	if err != nil {
		return err
	}
	a.cfg = cfg
	a.gw.Store(gw)
	return nil
}

// startUpstreams makes a client per provider, starting the built-in
// simulator on a loopback port for each provider of kind sim.
func (a *app) startUpstreams(cfg *config.Config) (map[string]*upstream.Client, error) {
	clients := map[string]*upstream.Client{}
	var counter tokenize.Counter
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		base := p.BaseURL
		if u, ok := a.simURLs[p.Name]; ok && p.Kind == config.KindSim {
			base = u // already running (a reload keeps it)
		} else if p.Kind == config.KindSim {
			if counter == nil {
				var err error
				if counter, err = tokenize.Default(); err != nil {
					return nil, err
				}
			}
			url, err := a.startSim(cfg, p, counter)
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", p.Name, err)
			}
			base = url
		}
		clients[p.Name] = upstream.New(upstream.Config{Name: p.Name, BaseURL: base, APIKey: p.APIKey, Timeout: p.Timeout,
			RequestIDEcho: p.RequestIDEcho, BreakerThreshold: p.BreakerThreshold, BreakerCooldown: p.BreakerCooldown})
	}
	return clients, nil
}

func (a *app) startSim(cfg *config.Config, p *config.Provider, counter tokenize.Counter) (string, error) {
	sc := sim.Config{Models: p.Sim.Models, Capacity: p.Sim.Capacity, AllowFaultHeader: p.Sim.AllowFaultHeader,
		OwnershipTags: p.Sim.OwnershipTags, Variant: p.Sim.Variant, TokenDelay: p.Sim.TokenDelay, PrefillDelay: p.Sim.PrefillDelay, Counter: counter}
	// Serve every model routed to this provider and, unless told
	// otherwise, hold exactly the capacity the config claims for them.
	for _, m := range cfg.Models {
		for _, r := range m.Routes {
			if r.Provider != p.Name {
				continue
			}
			if len(p.Sim.Models) == 0 {
				sc.Models = append(sc.Models, r.Model)
			}
			if p.Sim.Capacity == 0 {
				sc.Capacity = max(sc.Capacity, m.Capacity())
			}
		}
	}
	for _, f := range p.Sim.Faults {
		ft, err := sim.ParseFault(f)
		if err != nil {
			return "", err
		}
		sc.Faults = append(sc.Faults, ft)
	}
	s, err := sim.New(sc)
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	a.closers = append(a.closers, func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/v1"
	a.simURLs[p.Name] = url
	return url, nil
}

// adminKey reads or creates the generated admin key (mode 0600).
func adminKey(dataDir string) (key, path string, err error) {
	path = filepath.Join(dataDir, "admin.key")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), path, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("reading admin key: %w", err)
	}
	var raw [24]byte
	rand.Read(raw[:])
	key = "cust-admin-" + hex.EncodeToString(raw[:])
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("writing admin key: %w", err)
	}
	return key, path, nil
}

// printBanner writes the start-up banner in one write, so a reader that
// sees its first line sees all of it.
func printBanner(out io.Writer, cfg *config.Config, a *app) {
	var w bytes.Buffer
	defer func() { out.Write(w.Bytes()) }()
	addr := a.listener.Addr().String()
	base := "http://" + addr
	fmt.Fprintf(&w, "custody %s: inference-integrity gateway\n", version)
	fmt.Fprintf(&w, "  listening   %s  (OpenAI-compatible: point your client's base URL at %s/v1)\n", base, base)
	for _, p := range cfg.Providers {
		if u, ok := a.simURLs[p.Name]; ok {
			fmt.Fprintf(&w, "  upstream    %s: built-in simulator at %s\n", p.Name, u)
		} else {
			fmt.Fprintf(&w, "  upstream    %s: %s\n", p.Name, p.BaseURL)
		}
	}
	abs, _ := filepath.Abs(cfg.DataDir)
	fmt.Fprintf(&w, "  data        %s  (transparency log, index, keys)\n", abs)
	fmt.Fprintf(&w, "  log         %s/log/checkpoint  (verify with: custody audit --log %s/log)\n", base, base)
	if a.adminKeyFile != "" {
		fmt.Fprintf(&w, "  admin key   in %s  (console: %s/ui/)\n", a.adminKeyFile, base)
	}
	model := "sim-1"
	if len(cfg.Models) > 0 {
		model = cfg.Models[0].Name
	}
	fmt.Fprintf(&w, "\ntry:\n  curl -si %s/v1/chat/completions -H 'Content-Type: application/json' \\\n    -d '{\"model\":%q,\"messages\":[{\"role\":\"user\",\"content\":\"Hello, custody\"}]}'\n\n", base, model)
}
