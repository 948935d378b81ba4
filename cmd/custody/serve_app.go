//go:build unix

package main

// The composition root of custody serve: app opens the ledger, the index,
// the listener and the recorder once per process, and builds the gateway
// of a config on them (buildGateway) and puts it in force (commit), again
// at every reload (serve_reload.go). The built-in simulator's bootstrap is
// serve_sim.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/adminapi"
	"github.com/custody-gateway/custody/canary"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/console"
	"github.com/custody-gateway/custody/contamination"
	"github.com/custody-gateway/custody/doctor"
	"github.com/custody-gateway/custody/eval"
	"github.com/custody-gateway/custody/gateway"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/postgres"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/notify"
	"github.com/custody-gateway/custody/recorder"
	"github.com/custody-gateway/custody/telemetry"
	"github.com/custody-gateway/custody/upstream"
	"github.com/custody-gateway/custody/verify"
)

// app is a running gateway and what it owns.
type app struct {
	cfg          *config.Config // the config in force; changed only by reload
	logger       *slog.Logger
	gw           atomic.Pointer[gateway.Gateway] // swapped on reload
	server       *http.Server
	listener     net.Listener
	log          *ledger.Log
	index        index.Index
	recorder     *recorder.Recorder // built once: its hooks never change
	metrics      *telemetry.Metrics // one registry for the process, kept across reloads
	inflight     *gateway.Budget    // answers held in memory, one budget for the process, kept across reloads
	simURLs      map[string]string
	adminKeyFile string
	notifier     atomic.Pointer[notify.Notifier] // of the config in force
	contam       *contamination.Detector
	contract     *contractEvents // the routes' contract pass rates watched; built once, reconfigured on reload
	stopCanaries context.CancelFunc
	runner       *canary.Runner // of the gateway in force
	tracer       *telemetry.Tracer
	logSource    verify.LogSource // the ledger's own files, for the console's receipt checks
	// enrollDir overrides where identity enrollments live (the canary
	// command runs on throwaway stores but the serve's enrollments).
	enrollDir string
	// Evaluation suites (eval.go): evalDir overrides where baselines live
	// (as enrollDir); evalOnDemand runs none but custody eval's.
	stopEvals    context.CancelFunc
	evalRunner   *eval.Runner
	evalDir      string
	evalOnDemand bool
	closers      []func()
}

func (a *app) close() {
	if a.stopCanaries != nil {
		a.stopCanaries()
	}
	if a.stopEvals != nil {
		a.stopEvals()
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
		JournalSegmentSize: cfg.Ledger.SegmentBytes, Logger: logger, Witnesses: ledgerWitnesses(cfg), WitnessQuorum: cfg.Ledger.WitnessPolicy.Quorum,
		WitnessTimeout: cfg.Ledger.WitnessPolicy.Timeout})
	if err != nil {
		return nil, fmt.Errorf("opening the ledger: %w", err)
	}
	if err := recordConfig(a.log, cfg, "start"); err != nil {
		a.log.Close(ctx)
		return nil, err
	}
	a.closers = append(a.closers, func() { closeLedger(a.log, logger) })

	switch cfg.Index.Backend {
	case "postgres":
		a.index, err = postgres.Open(ctx, cfg.Index.DSN)
	default:
		// The index finds records; the log holds them (sqlite migration 7).
		a.index, err = sqlite.OpenWithLog(ctx, filepath.Join(cfg.DataDir, "index.db"), a.log)
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
	// One registry for the process: a reload keeps every counter.
	a.metrics = telemetry.NewMetrics(modelNames(cfg))
	a.metrics.Register(newWitnessCollector(a.log))
	a.metrics.LedgerSyncs(a.log.JournalSyncs)
	a.metrics.LedgerCommits(ledger.CommitBounds, a.log.JournalCommitTimes)
	a.inflight = gateway.NewBudget(cfg.Limits.MaxInflightBytes)
	a.metrics.InflightBytes(a.inflight.Reserved)
	a.contract = startContractEvents(cfg, a.index, a.notify, logger)
	a.closers = append(a.closers, a.contract.close)
	a.recorder, err = recorder.New(ctx, recorder.Config{Log: a.log, Index: a.index, TenantIDs: tenantIDs,
		PublicURL: strings.TrimRight(publicURL, "/"), Logger: logger,
		OnRecord: func(tx *custody.Transaction) { a.metrics.LedgerLeaf(); a.contract.observe(tx) },
		OnEvent:  a.notify,
	})
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
	b, err := a.buildGateway(cfg)
	if err != nil {
		return nil, err
	}
	a.commit(b)
	a.server = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.gw.Load().ServeHTTP(w, r) }),
		ReadHeaderTimeout: cfg.Limits.ReadHeaderTimeout,
		IdleTimeout:       cfg.Limits.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return a, nil
}

// built is a gateway made for a config and not yet in force, with the
// runners and the webhooks' notifier that go with it, none started: commit
// puts it all in force, abandon drops it. Everything that can fail happens
// while building, so that a reload refused at any step (a bad suite, the
// eval key unreadable, the config leaf not recorded) leaves the gateway,
// its runners and its webhooks in force exactly as they were.
type built struct {
	cfg      *config.Config
	gw       *gateway.Gateway
	models   []string
	notifier *notify.Notifier
	clients  map[string]*upstream.Client
	canaries *canary.Runner
	evals    *eval.Runner
	// The runners' contexts: cancelled by abandon, or when the next
	// commit (or close) stops them.
	canaryCtx, evalCtx      context.Context
	stopCanaries, stopEvals context.CancelFunc
}

// abandon drops b (runners never started, a notifier that never
// delivered), whole or as far as buildGateway got.
func (b *built) abandon() {
	b.stopCanaries()
	b.stopEvals()
	go b.notifier.Close(context.Background())
}

// commit puts b in force: the metrics' models and the webhooks become b's,
// its runners take over the previous ones' state (the canaries' route
// health, the evals' pass state) and start as those stop, and the gateway
// serves the next request.
func (a *app) commit(b *built) {
	a.metrics.SetModels(b.models)
	a.contract.watch.Configure(contractWatchConfig(b.cfg))
	if old := a.notifier.Swap(b.notifier); old != nil {
		go old.Close(context.Background()) // it finishes its deliveries
	}
	b.canaries.Adopt(a.runner)
	if a.stopCanaries != nil {
		a.stopCanaries()
	}
	for _, w := range b.canaries.Plan() {
		a.logger.Warn("canary probe cannot run: skipped", "route", w.Route, "probe", w.Probe, "reason", w.Reason)
	}
	if b.cfg.Canaries.Interval > 0 {
		go b.canaries.Run(b.canaryCtx)
	}
	a.runner, a.stopCanaries = b.canaries, b.stopCanaries
	if a.stopEvals != nil {
		a.stopEvals()
		a.evalRunner.Wait() // its state is final before the new runner takes it over
	}
	b.evals.Adopt(a.evalRunner)
	for _, rep := range b.evals.Last() { // kept across a reload; the metrics are new
		a.metrics.EvalPassRatio(rep.Suite, rep.Route, rep.Ratio)
	}
	if !a.evalOnDemand && len(b.cfg.Evals) > 0 {
		go b.evals.Run(b.evalCtx)
	}
	a.evalRunner, a.stopEvals = b.evals, b.stopEvals
	a.gw.Store(b.gw)
	b.gw.ProbeProviders() // in the background: logged, and shown by /readyz
	go doctor.Warnings(context.Background(), b.cfg, b.clients, a.logger)
}

// buildGateway makes the gateway of cfg on the app's stores, not in force
// yet (built).
func (a *app) buildGateway(cfg *config.Config) (*built, error) {
	suites, err := eval.Suites(cfg.Evals)
	if err != nil {
		return nil, fmt.Errorf("bad configuration:\n%w", err)
	}
	clients, err := a.startUpstreams(cfg)
	if err != nil {
		return nil, err
	}
	models := modelNames(cfg)
	metrics := a.metrics
	var gw *gateway.Gateway // the console asks it about admin keys, once it exists
	// One admin-key failure limiter for the console and the admin API,
	// kept across reloads.
	authFailures := gateway.NewAuthFailures(cfg.Limits.AuthFailuresPerMinute, nil)
	var replay *check.Replay // the replay check's claims, kept across reloads
	if old := a.gw.Load(); old != nil {
		authFailures, replay = old.AuthFailures(), old.Replay()
	}
	api := adminapi.New(adminapi.Config{Config: cfg, Recorder: a.recorder, Index: a.index, Log: a.log})
	con, err := console.New(console.Config{
		IsAdminKey:    func(key string) bool { return gw.IsAdminKey(key) },
		API:           api.InProcess(),
		Log:           a.log,
		VerifyReceipt: console.LedgerVerifier(a.logSource, a.log.Verifier()),
		Logger:        a.logger,
		LoginLimiter:  authFailures,
		Models:        models,
	})
	if err != nil {
		return nil, err
	}
	opts := gateway.Options{AuthFailures: authFailures, Replay: replay, Inflight: a.inflight, Config: cfg, Clients: clients, Recorder: a.recorder, Logger: a.logger,
		Contamination: contamination.Gateway{D: a.detector(cfg)},
		Observer:      metrics,
		KnownPaths:    a.knownPaths(),
		Mounts:        map[string]http.Handler{"GET /metrics": metrics.Handler(), console.Prefix: con},
	}
	maps.Copy(opts.Mounts, api.Mounts())
	if h, ok := a.logger.Handler().(flushingHandler); ok {
		opts.TransactionLog = h.transactionLog()
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
	api.Bind(gw)
	b := &built{cfg: cfg, gw: gw, models: models, clients: clients, notifier: newNotifier(cfg, a.logger)}
	b.canaryCtx, b.stopCanaries = context.WithCancel(context.Background())
	b.evalCtx, b.stopEvals = context.WithCancel(context.Background())
	if b.canaries, err = a.canaries(b.canaryCtx, cfg, gw, metrics); err != nil {
		b.abandon()
		return nil, err
	}
	gw.SetCanaries(b.canaries)
	if b.evals, err = a.evals(b.evalCtx, cfg, suites, gw, metrics); err != nil {
		b.abandon()
		return nil, err
	}
	gw.SetEvals(b.evals)
	api.SetRunners(b.canaries, b.evals)
	return b, nil
}

func modelNames(cfg *config.Config) []string {
	models := make([]string, len(cfg.Models))
	for i, m := range cfg.Models {
		models[i] = m.Name
	}
	return models
}

// newNotifier is a notifier for cfg's webhooks.
func newNotifier(cfg *config.Config, logger *slog.Logger) *notify.Notifier {
	var hooks []notify.Hook
	for _, h := range cfg.Webhooks {
		hooks = append(hooks, notify.Hook{URL: h.URL, Secret: h.Secret, Events: h.Events})
	}
	return notify.New(notify.Config{Hooks: hooks, Logger: logger})
}

// notify sends e to the webhooks of the config in force (none before the
// first gateway is built).
func (a *app) notify(e index.Event) {
	if n := a.notifier.Load(); n != nil {
		n.Notify(e)
	}
}

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

// canaries makes the canary runner of a gateway, on ctx: scheduled when
// canaries.interval is set (commit starts it), triggered by path changes in
// any case. On a reload commit has the new runner adopt the previous one's
// health (a quarantined route stays quarantined), then stops the previous
// one: its runs in flight are cancelled, which counts as nothing
// (canary.Runner).
func (a *app) canaries(ctx context.Context, cfg *config.Config, gw *gateway.Gateway, metrics *telemetry.Metrics) (*canary.Runner, error) {
	r, err := canary.New(ctx, canary.Config{
		Routes: canary.Routes(gw.Routes()), Probes: cfg.Canaries.Probes, Interval: cfg.Canaries.Interval,
		NeedleMaxTokens: max(cfg.Canaries.NeedleMaxTokens, 0),
		Dir:             a.canaryDir(cfg),
		AddSecret:       a.contam.AddSecret, RemoveSecret: a.contam.RemoveSecret,
		OnStatus: metrics.Canary,
		OnEvent:  func(e canary.Event) { a.canaryEvent(e) },
	})
	if err != nil {
		return nil, fmt.Errorf("canaries: %w", err)
	}
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
	ev := index.CanaryEvent(e.Time, string(e.Kind), e.Model, e.Name, e.Probe, e.Detail)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Logged first: an event the admin API shows has been logged, and a
	// stalled index does not hold back the operator's warning.
	a.logger.Log(ctx, e.Kind.Level(), "canary", "kind", e.Kind, "route", e.Name, "probe", e.Probe, "detail", e.Detail)
	if err := a.index.AddEvents(ctx, ev); err != nil {
		a.logger.Error("recording a canary event", "err", err)
	}
	a.notify(ev)
}

// ledgerPublishWait bounds how long stopping waits for a checkpoint that
// covers the last leaves. Every answered request's leaf is already durable
// in the journal, so a checkpoint that cannot be had in time (a witness
// quorum out of reach) is published at the next start instead; stopping
// stays within an orchestrator's grace period (Kubernetes: 30 s, of which
// the HTTP drain has had its share).
const ledgerPublishWait = 10 * time.Second

// closeLedger closes the log, waiting at most ledgerPublishWait for its
// last checkpoint, and says what is left for the next start.
func closeLedger(l *ledger.Log, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), ledgerPublishWait)
	defer cancel()
	err := l.Close(ctx)
	if err == nil {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
		defer rcancel()
		logger.Warn("stopping: leaves are durable but not yet published under a checkpoint; the next start publishes them",
			"unpublished", l.Unpublished(rctx), "waited", ledgerPublishWait.String(), "err", err)
		return
	}
	logger.Error("closing the ledger", "err", err)
}
