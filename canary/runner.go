package canary

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody/internal/coalesce"
	"github.com/custody-gateway/custody/internal/routeclient"
	"github.com/custody-gateway/custody/tokenize"
)

// Route is one route the Runner probes: the client-facing model, the
// route's index in the model's routes (as Quarantined and Trigger name
// it) and the gateway's Target for it.
type Route = routeclient.Route[Target]

// Config configures a Runner. Zero fields take the defaults given.
type Config struct {
	Routes []Route
	// Probes run on every route, by name; nil means DefaultProbes (all but
	// oversize). They run in the order of Probes().
	Probes []string
	// Interval between runs of a route in Run; 0 means 60s.
	Interval time.Duration
	// Jitter spreads runs by ±Jitter×Interval; 0 means 0.1.
	Jitter float64
	// Timeout bounds one probe; 0 means 2 minutes.
	Timeout time.Duration
	// FailRuns failing runs in a row make a route red (quarantined); 0
	// means 2. PassRuns passing runs in a row bring it back; 0 means 2.
	FailRuns, PassRuns int
	// Dir holds identity enrollments (data_dir/canary); "" keeps them in
	// memory only.
	Dir string
	// Counter sizes the needle and oversize prompts of targets that are not
	// CountingTargets; nil means o200k_base.
	Counter tokenize.Counter
	// NeedleFraction of the route's verified capacity the needle prompt
	// fills; 0 means 0.5. NeedleMaxTokens caps it (0: no cap): a long
	// prompt every Interval costs money on a paid upstream.
	NeedleFraction  float64
	NeedleMaxTokens int
	// NeedleDepths where the needles sit, ascending fractions of the
	// prompt; nil means 0.1, 0.5, 0.9.
	NeedleDepths []float64
	// OversizeMargin is how far over capacity the oversize prompt may go,
	// in tokens; 0 means 64.
	OversizeMargin int
	// SecretTenant is the synthetic tenant of the secret probe; "" means
	// "custody-canary".
	SecretTenant string
	// MaxSecrets bounds the live canary secrets; 0 means 16. Older ones
	// are removed with RemoveSecret.
	MaxSecrets int
	// AddSecret registers a canary secret with the contamination matcher
	// (before the request that carries it is sent); RemoveSecret drops it.
	AddSecret    func(secret, label string)
	RemoveSecret func(secret string)
	Identity     IdentityConfig
	Cache        CacheConfig
	// OnStatus is called after every probe (custody_canary_status).
	// Callbacks are called from the goroutines running routes, several at
	// once: they must be safe for concurrent use and quick.
	OnStatus func(route, probe string, ok bool)
	// OnEvent is called for failures, quarantine, recovery and first
	// enrollment (not for Reenroll, whose event is returned).
	OnEvent func(Event)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Seed, when not zero, seeds the cache probe's coin flips (which
	// tenant owns a pair's prefix, which of the two asks goes first, the
	// control prompt's word order), so that a test of one run on an honest
	// route is the same run every time; zero draws them from math/rand.
	Seed uint64
}

// Errors of the Runner's API.
var (
	ErrUnknownRoute = errors.New("canary: unknown route")
	ErrEnroll       = errors.New("canary: enrollment failed")
)

type routeKey struct {
	model string
	index int
}

// route is one probed route.
type route struct {
	model string
	index int
	t     Target

	runs coalesce.Runs // held for a whole run or enrollment: one at a time

	emu      sync.Mutex
	loaded   bool        // guarded by emu
	enr      *Enrollment // guarded by emu
	enrolErr error       // unreadable enrollment file; guarded by emu

	health healthState // guarded by Runner.mu
	last   *Report     // guarded by Runner.mu
}

// Runner runs canary probes and keeps route health.
type Runner struct {
	coins   *coins // the cache probe's coin flips (Config.Seed)
	cfg     Config
	ctx     context.Context // bounds triggered runs
	counter tokenize.Counter
	probes  []string
	routes  []*route
	byKey   map[routeKey]*route
	secrets *secretRing
	wg      sync.WaitGroup // triggered runs in flight

	// quarantined is replaced, never mutated: Quarantined reads it without
	// a lock on the request path.
	quarantined atomic.Pointer[map[routeKey]bool]
	// cacheShared: routes whose cache probe last failed; replaced, never
	// mutated, as quarantined.
	cacheShared atomic.Pointer[map[routeKey]bool]

	mu sync.Mutex // guards route health and last reports, serialises publishing
}

// New returns a Runner for cfg. ctx bounds the runs started by Trigger.
// It reads enrollments from cfg.Dir; an unreadable one makes the route's
// identity probe fail until Reenroll.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	counter := cfg.Counter
	if counter == nil {
		if counter, err = tokenize.Default(); err != nil {
			return nil, fmt.Errorf("canary: %w", err)
		}
	}
	r := &Runner{
		coins:   newCoins(cfg.Seed),
		cfg:     cfg,
		ctx:     ctx,
		counter: counter,
		byKey:   map[routeKey]*route{},
		secrets: &secretRing{add: cfg.AddSecret, remove: cfg.RemoveSecret, max: cfg.MaxSecrets},
	}
	for _, p := range Probes() {
		if slices.Contains(cfg.Probes, p) {
			r.probes = append(r.probes, p)
		}
	}
	for _, rc := range cfg.Routes {
		rt := &route{model: rc.Model, index: rc.Index, t: rc.Target, health: healthState{health: Green}}
		r.routes = append(r.routes, rt)
		r.byKey[routeKey{rc.Model, rc.Index}] = rt
	}
	empty := map[routeKey]bool{}
	r.quarantined.Store(&empty)
	noneShared := map[routeKey]bool{}
	r.cacheShared.Store(&noneShared)
	return r, nil
}

func (cfg Config) withDefaults() (Config, error) {
	var errs []error
	if cfg.Probes == nil {
		cfg.Probes = DefaultProbes()
	}
	for _, p := range cfg.Probes {
		if !slices.Contains(Probes(), p) {
			errs = append(errs, fmt.Errorf("probes: unknown probe %q (want one of %s)", p, strings.Join(Probes(), ", ")))
		}
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Jitter == 0 {
		cfg.Jitter = 0.1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.FailRuns == 0 {
		cfg.FailRuns = 2
	}
	if cfg.PassRuns == 0 {
		cfg.PassRuns = 2
	}
	if cfg.NeedleFraction == 0 {
		cfg.NeedleFraction = 0.5
	}
	if cfg.NeedleDepths == nil {
		cfg.NeedleDepths = []float64{0.1, 0.5, 0.9}
	}
	if cfg.OversizeMargin == 0 {
		cfg.OversizeMargin = 64
	}
	if cfg.SecretTenant == "" {
		cfg.SecretTenant = "custody-canary"
	}
	if cfg.MaxSecrets == 0 {
		cfg.MaxSecrets = 16
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Identity = cfg.Identity.withDefaults()
	cfg.Cache = cfg.Cache.withDefaults()
	if !cfg.Cache.valid() {
		errs = append(errs, errors.New("cache: pairs must be in [2, 64], prefix tokens at least 32, alpha in (0, 1), the two tenants distinct"))
	}
	id := cfg.Identity
	switch {
	case cfg.Interval < 0, cfg.Timeout < 0:
		errs = append(errs, errors.New("interval and timeout must not be negative"))
	case cfg.Jitter < 0 || cfg.Jitter >= 1:
		errs = append(errs, fmt.Errorf("jitter %v must be in [0, 1)", cfg.Jitter))
	}
	if cfg.FailRuns < 1 || cfg.PassRuns < 1 {
		errs = append(errs, errors.New("fail_runs and pass_runs must be at least 1"))
	}
	if cfg.NeedleFraction < 0 || cfg.NeedleFraction > 1 {
		errs = append(errs, fmt.Errorf("needle fraction %v must be in (0, 1]", cfg.NeedleFraction))
	}
	if len(cfg.NeedleDepths) == 0 || !slices.IsSorted(cfg.NeedleDepths) || cfg.NeedleDepths[0] < 0 || cfg.NeedleDepths[len(cfg.NeedleDepths)-1] > 1 {
		errs = append(errs, errors.New("needle depths must be ascending fractions in [0, 1]"))
	}
	if cfg.OversizeMargin < 0 || cfg.MaxSecrets < 1 {
		errs = append(errs, errors.New("oversize margin must not be negative and max secrets must be at least 1"))
	}
	if id.Prompts < 1 || id.Prompts > maxEnrollPrompts || id.EnrollSamples < 2 || id.EnrollSamples > maxEnrollSamples ||
		id.Samples < 1 || id.MaxTokens < 1 || id.MaxTokens > maxSampleTokens || id.TopLogprobs > maxAlts ||
		id.Alpha <= 0 || id.Alpha >= 1 || id.Permutations < 1 || id.LogprobScale <= 0 ||
		id.Temperature < 0 || id.Temperature > 2 {
		errs = append(errs, errors.New("identity: a setting is out of range"))
	}
	seen := map[routeKey]bool{}
	for i, rc := range cfg.Routes {
		k := routeKey{rc.Model, rc.Index}
		switch {
		case rc.Target == nil:
			errs = append(errs, fmt.Errorf("routes[%d]: no target", i))
		case seen[k]:
			errs = append(errs, fmt.Errorf("routes[%d]: route %d of %s given twice", i, rc.Index, rc.Model))
		}
		seen[k] = true
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, fmt.Errorf("canary config: %w", err)
	}
	return cfg, nil
}

func (r *Runner) now() time.Time { return r.cfg.Now() }

// counterFor is the tokenizer that sizes t's long prompts.
func (r *Runner) counterFor(t Target) tokenize.Counter {
	if ct, ok := t.(CountingTarget); ok {
		if c := ct.Counter(); c != nil {
			return c
		}
	}
	return r.counter
}

// Level is the log level of an event of kind k: a failure and a change
// of quarantine want an operator's attention (WARN); the rest is INFO.
func (k EventKind) Level() slog.Level {
	switch k {
	case EventFailure, EventQuarantined, EventRecovered:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func (r *Runner) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	if r.cfg.OnEvent != nil {
		r.cfg.OnEvent(e)
	}
}

// Quarantined reports whether canaries found the route red. It takes no
// lock: the gateway calls it on every request.
func (r *Runner) Quarantined(model string, route int) bool {
	return (*r.quarantined.Load())[routeKey{model, route}]
}

// Quarantine reports since when and why canaries took the route out of
// service, and whether they did: the admin API reads it from here, never
// back out of the timeline's event text.
func (r *Runner) Quarantine(model string, route int) (Quarantine, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt := r.byKey[routeKey{model, route}]
	if rt == nil || rt.health.health != Red {
		return Quarantine{}, false
	}
	return rt.health.out, true
}

// CacheShared reports whether the route's last conclusive cache probe
// found its prompt cache shared across tenants: a policy with
// on_cache_shared: quarantine then does not use it.
func (r *Runner) CacheShared(model string, route int) bool {
	return (*r.cacheShared.Load())[routeKey{model, route}]
}

// noteCache records the cache probe's verdict on the route, if it ran
// and concluded. Called with r.mu held.
func (r *Runner) noteCache(rt *route, rep *Report) {
	for _, res := range rep.Results {
		if res.Probe != ProbeCache {
			continue
		}
		shared := res.Outcome() == StatusFailed
		if !shared && res.Outcome() != StatusOK {
			return // skipped or inconclusive: as it was
		}
		old := *r.cacheShared.Load()
		m := make(map[routeKey]bool, len(old)+1)
		for k, v := range old {
			m[k] = v
		}
		if k := (routeKey{rt.model, rt.index}); shared {
			m[k] = true
		} else {
			delete(m, k)
		}
		r.cacheShared.Store(&m)
	}
}

// RunOnce runs every probe on every route once, routes in parallel, and
// returns the reports in the order of Config.Routes (`custody canary`).
func (r *Runner) RunOnce(ctx context.Context) []Report {
	out := make([]Report, len(r.routes))
	var wg sync.WaitGroup
	for i, rt := range r.routes {
		wg.Go(func() { out[i] = r.runRoute(ctx, rt) })
	}
	wg.Wait()
	return out
}

// RunRoute runs every probe on one route once.
func (r *Runner) RunRoute(ctx context.Context, model string, index int) (Report, error) {
	rt := r.byKey[routeKey{model, index}]
	if rt == nil {
		return Report{}, fmt.Errorf("%w: route %d of %s", ErrUnknownRoute, index, model)
	}
	return r.runRoute(ctx, rt), nil
}

// Run runs every route's probes every Interval (± Jitter) until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, rt := range r.routes {
		wg.Go(func() {
			// The first run comes within one jittered slot of the start,
			// spread so that routes do not all fire together.
			wait := time.Duration(rand.Float64() * r.cfg.Jitter * float64(r.cfg.Interval))
			for {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				r.runRoute(ctx, rt)
				wait = time.Duration(float64(r.cfg.Interval) * (1 + r.cfg.Jitter*(2*rand.Float64()-1)))
			}
		})
	}
	wg.Wait()
	return nil
}

// Trigger runs the route's probes at once, in the background (a path
// change calls it). Triggers coalesce: while a triggered run waits to
// start, further triggers of that route join it; a trigger arriving
// during a run queues one more run after it. Unknown routes are ignored.
func (r *Runner) Trigger(model string, index int) {
	rt := r.byKey[routeKey{model, index}]
	if rt == nil {
		return
	}
	rt.runs.Trigger(&r.wg, func() {
		if r.ctx.Err() == nil {
			r.runLocked(r.ctx, rt)
		}
	})
}

// Wait waits for triggered runs in flight (for shutdown and tests).
func (r *Runner) Wait() { r.wg.Wait() }

// Reenroll takes a new identity reference sample of the route and
// replaces the old one (on disk too). It is the admin API's explicit
// action; the returned event is for the caller to record (it is not sent
// to OnEvent).
func (r *Runner) Reenroll(ctx context.Context, model string, index int) (Event, error) {
	rt := r.byKey[routeKey{model, index}]
	if rt == nil {
		return Event{}, fmt.Errorf("%w: route %d of %s", ErrUnknownRoute, index, model)
	}
	rt.runs.Lock()
	defer rt.runs.Unlock()
	e, f := r.enroll(ctx, rt.t)
	if f != nil {
		return Event{}, fmt.Errorf("%w: %s: %s", ErrEnroll, rt.t.Name(), f.Evidence)
	}
	if err := r.storeEnrollment(rt, e); err != nil {
		return Event{}, fmt.Errorf("%w: %s: %w", ErrEnroll, rt.t.Name(), err)
	}
	return Event{Time: r.now(), Kind: EventReenrolled, Model: model, Route: index, Name: rt.t.Name(),
		Detail: fmt.Sprintf("%d prompts x %d samples, model %s", len(e.Samples), r.cfg.Identity.EnrollSamples, e.Model)}, nil
}

// Last returns the latest report of every route that has run, in the
// order of Config.Routes (for the admin API and console).
func (r *Runner) Last() []Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Report
	for _, rt := range r.routes {
		if rt.last != nil {
			out = append(out, *rt.last)
		}
	}
	return out
}

// enrollment returns the route's enrollment, reading it from Dir once.
func (rt *route) enrollment(dir string) (*Enrollment, error) {
	rt.emu.Lock()
	defer rt.emu.Unlock()
	if !rt.loaded && dir != "" {
		rt.enr, rt.enrolErr = loadEnrollment(dir, rt.t.Name())
	}
	rt.loaded = true
	return rt.enr, rt.enrolErr
}

func (r *Runner) storeEnrollment(rt *route, e *Enrollment) error {
	if r.cfg.Dir != "" {
		if err := saveEnrollment(r.cfg.Dir, e); err != nil {
			return err
		}
	}
	rt.emu.Lock()
	rt.enr, rt.enrolErr, rt.loaded = e, nil, true
	rt.emu.Unlock()
	return nil
}

func (r *Runner) runRoute(ctx context.Context, rt *route) Report {
	rt.runs.Lock()
	defer rt.runs.Unlock()
	return r.runLocked(ctx, rt)
}

// runLocked runs the probes of rt (rt.runs held) and folds the run into
// its health.
func (r *Runner) runLocked(ctx context.Context, rt *route) Report {
	name := rt.t.Name()
	rep := Report{Model: rt.model, Route: rt.index, Name: name, Time: r.now()}
	for _, p := range r.probes {
		pctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
		start := time.Now()
		var res ProbeResult
		if why := r.cannotRun(p, rt.t); why != "" {
			res = skip(p, "%s", why)
		}
		switch {
		case res.Status == StatusSkipped:
		case p == ProbeEcho:
			res = r.probeEcho(pctx, rt.t)
		case p == ProbeNeedle:
			res = r.probeNeedle(pctx, rt.t)
		case p == ProbeOversize:
			res = r.probeOversize(pctx, rt.t)
		case p == ProbeSecret:
			res = r.probeSecret(pctx, rt.t)
		case p == ProbeIdentity:
			res = r.probeIdentity(pctx, rt)
		case p == ProbeCache:
			res = r.probeCache(pctx, rt.t)
		}
		cancel()
		if ctx.Err() != nil {
			// Cut short (a reload or shutdown stopped the runner): a
			// cancelled run says nothing of the route, so neither its
			// status nor its health changes, and no event is sent.
			return rep
		}
		res.Duration = time.Since(start)
		rep.Results = append(rep.Results, res)
		// A skipped or inconclusive probe says nothing about the route:
		// custody_canary_status keeps its last conclusive value (none, for
		// a probe that never runs).
		if o := res.Outcome(); r.cfg.OnStatus != nil && (o == StatusOK || o == StatusFailed) {
			r.cfg.OnStatus(name, p, res.OK)
		}
	}
	r.fold(rt, &rep)
	return rep
}

// fold updates rt's health with the run, publishes a changed quarantine
// and emits the events.
func (r *Runner) fold(rt *route, rep *Report) {
	var events []Event
	base := Event{Time: rep.Time, Model: rt.model, Route: rt.index, Name: rep.Name}
	var why string // the failing probes with their evidence
	if !rep.OK() {
		var probes, detail []string
		for _, res := range rep.Results {
			if res.Outcome() == StatusFailed {
				probes = append(probes, res.Probe)
				detail = append(detail, res.Probe+": "+res.Evidence)
			}
		}
		e := base
		why = strings.Join(detail, "; ")
		e.Kind, e.Probe, e.Detail = EventFailure, strings.Join(probes, ","), why
		events = append(events, e)
	}
	r.mu.Lock()
	before := rt.health.health
	rep.Health = before
	// A shared prompt cache is a matter of policy (on_cache_shared), not
	// of the route's health: the cache probe's verdict is kept apart.
	healthOK := rep.okExcept(ProbeCache)
	if !healthOK || rep.Conclusive() {
		// An inconclusive run without a failure leaves the streaks alone:
		// it must neither quarantine the route nor bring it back.
		rep.Health = rt.health.observe(healthOK, r.cfg.FailRuns, r.cfg.PassRuns)
	}
	r.noteCache(rt, rep)
	last := *rep
	rt.last = &last
	if (before == Red) != (rep.Health == Red) {
		old := *r.quarantined.Load()
		m := make(map[routeKey]bool, len(old)+1)
		for k, v := range old {
			m[k] = v
		}
		k := routeKey{rt.model, rt.index}
		e := base
		if rep.Health == Red {
			m[k] = true
			e.Kind = EventQuarantined
			e.Detail = fmt.Sprintf("%d failing runs in a row", rt.health.failRuns)
			rt.health.out = Quarantine{Since: rep.Time, Reason: e.Detail}
			if why != "" {
				rt.health.out.Reason = why + " (" + e.Detail + ")"
			}
		} else {
			rt.health.out = Quarantine{}
			delete(m, k)
			e.Kind = EventRecovered
			e.Detail = fmt.Sprintf("%d passing runs in a row", rt.health.passRuns)
		}
		r.quarantined.Store(&m)
		events = append(events, e)
	}
	r.mu.Unlock()
	for _, e := range events {
		r.emit(e)
	}
}
