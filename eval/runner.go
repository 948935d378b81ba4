package eval

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody/internal/coalesce"
	"github.com/custody-gateway/custody/internal/routeclient"
)

// Target is one route of one model as the gateway exposes it to eval
// runs: it sends a chat completion through custody's checks on exactly
// that route (no fallback), as the synthetic tenant custody:eval.
// Implementations must be safe for concurrent use.
type Target interface {
	// Name is the route's label, MODEL/PROVIDER.
	Name() string
	// Chat sends req. A custody rejection is a Result with Code set;
	// err is for requests that got no answer (ctx done, say).
	Chat(ctx context.Context, req Request) (Result, error)
}

// Result is what a Target got back.
type Result struct {
	Status int
	Body   []byte
	Code   string // custody's rejection code, "" when served
	// Contract is the contract check's finding on the answer: "ok", the
	// broken clause's code, "" when it did not judge it.
	Contract string
}

// Route is one route the Runner evaluates: its model, its index in the
// model's routes and the Target for it.
type Route = routeclient.Route[Target]

// Config configures a Runner.
type Config struct {
	Suites []*Suite
	Routes []Route
	// Dir holds baselines and the digest key (data_dir/eval); "" keeps
	// them in memory only.
	Dir string
	// Timeout bounds one case; 0 means 2 minutes.
	Timeout time.Duration
	// OnRun is called after every run (the ledger leaf, the event, the
	// metric), from the goroutine that ran it: several at once. It
	// returns the id of the run's ledger leaf, or "".
	OnRun func(Report) string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// RetryMin and RetryMax bound the backoff of re-runs of a failed
	// suite on a route while Run is running: a route whose path is not
	// seen to change (it went back to a path already known, say) becomes
	// eligible again without an operator. The first retry comes RetryMin
	// after the failure, each next one twice as late, at most RetryMax (or
	// the suite's interval, if shorter). 0 means 1 minute and 1 hour;
	// negative RetryMin means no retries.
	RetryMin, RetryMax time.Duration
}

// ErrNoMatch: no suite covers the routes asked for.
var ErrNoMatch = errors.New("eval: no suite covers that route")

// passKey names one suite on one route.
type passKey struct {
	suite string
	model string
	index int
}

// job is one suite on one route.
type job struct {
	suite *Suite
	rt    Route

	runs coalesce.Runs // held for a whole run

	tmu   sync.Mutex
	retry *time.Timer // the pending retry of a failed run; guarded by tmu
	fails int         // failed runs in a row; guarded by tmu

	gen  atomic.Uint64 // bumped by every path change: a run older than it cannot pass the route
	last *Report       // guarded by Runner.mu
	kept bool          // state carried over by Adopt: no run at start
}

// same reports whether j and o are the same suite version on the same
// route.
func (j *job) same(o *job) bool {
	return j.suite.Name == o.suite.Name && j.suite.Digest == o.suite.Digest && j.suite.Threshold == o.suite.Threshold &&
		j.rt.Model == o.rt.Model && j.rt.Index == o.rt.Index && j.rt.Target.Name() == o.rt.Target.Name()
}

// Runner runs suites and keeps which routes' current paths passed them.
type Runner struct {
	cfg     Config
	ctx     context.Context // bounds triggered runs
	key     []byte
	jobs    []*job
	wg      sync.WaitGroup
	retries atomic.Bool // Run is running: failed runs are retried

	// passed is replaced, never mutated: Passed reads it without a lock
	// on the request path.
	passed atomic.Pointer[map[passKey]bool]

	mu  sync.Mutex           // guards jobs' last reports and mem; serialises publishing passed
	mem map[string]*baseline // baselines kept in memory (no Dir); guarded by mu
}

// New returns a Runner. ctx bounds the runs Trigger and Run start.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryMin == 0 {
		cfg.RetryMin = time.Minute
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = time.Hour
	}
	key, err := digestKey(cfg.Dir)
	if err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, ctx: ctx, key: key}
	for _, s := range cfg.Suites {
		for _, rt := range cfg.Routes {
			if s.Covers(rt.Target.Name()) {
				r.jobs = append(r.jobs, &job{suite: s, rt: rt})
			}
		}
	}
	r.passed.Store(&map[passKey]bool{})
	return r, nil
}

// Adopt takes over the state of p, the runner this one replaces (a config
// reload): each suite on a route that both have, unchanged (same file
// digest and threshold, same route), keeps its pass state and latest
// report and is not run again at start, so that a reload does not take
// routes from the policies that require evals. p must be stopped (its
// Wait returned), and r not started yet. A nil p is no runner.
func (r *Runner) Adopt(p *Runner) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	passed := map[passKey]bool{}
	for _, j := range r.jobs {
		for _, o := range p.jobs {
			if !j.same(o) || o.last == nil {
				continue
			}
			k := passKey{j.suite.Name, j.rt.Model, j.rt.Index}
			j.last, j.kept = o.last, true
			if (*p.passed.Load())[k] {
				passed[k] = true
			}
		}
	}
	r.passed.Store(&passed)
}

// Passed reports whether the route's current path passed the suite: its
// latest run since the last path change reached the threshold. It takes
// no lock: the gateway calls it on every request of a policy that
// requires evals.
func (r *Runner) Passed(suite, model string, index int) bool {
	return (*r.passed.Load())[passKey{suite, model, index}]
}

func (r *Runner) publish(k passKey, ok bool) {
	old := *r.passed.Load()
	if old[k] == ok {
		return
	}
	m := make(map[passKey]bool, len(old)+1)
	for kk, v := range old {
		m[kk] = v
	}
	if ok {
		m[k] = true
	} else {
		delete(m, k)
	}
	r.passed.Store(&m)
}

// RunOptions select what RunOnce runs.
type RunOptions struct {
	Suite string // "" every suite
	Route string // MODEL/PROVIDER; "" every route
	// Pin records each run as its suite's baseline on the route, passing
	// or not.
	Pin bool
}

// RunOnce runs the selected suites on the routes they cover, routes in
// parallel, and returns the reports in suite, then route order. The runs
// end when ctx or the Runner's own context does.
func (r *Runner) RunOnce(ctx context.Context, o RunOptions) ([]Report, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.ctx, cancel)()
	var sel []*job
	for _, j := range r.jobs {
		if (o.Suite == "" || j.suite.Name == o.Suite) && (o.Route == "" || j.rt.Target.Name() == o.Route) {
			sel = append(sel, j)
		}
	}
	if len(sel) == 0 {
		return nil, ErrNoMatch
	}
	out := make([]Report, len(sel))
	var wg sync.WaitGroup
	for i, j := range sel {
		wg.Go(func() {
			j.runs.Lock()
			defer j.runs.Unlock()
			out[i] = *r.runLocked(ctx, j, TriggerDemand, o.Pin)
		})
	}
	wg.Wait()
	return out, nil
}

// Last returns the latest report of every suite on every route that has
// run, in suite, then route order.
func (r *Runner) Last() []Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Report
	for _, j := range r.jobs {
		if j.last != nil {
			out = append(out, *j.last)
		}
	}
	return out
}

// Covering is the suites that cover the route, by name.
func (r *Runner) Covering(model string, index int) []string {
	var out []string
	for _, j := range r.jobs {
		if j.rt.Model == model && j.rt.Index == index {
			out = append(out, j.suite.Name)
		}
	}
	return out
}

// runLocked runs j once (j.runs held).
func (r *Runner) runLocked(ctx context.Context, j *job, why Trigger, pin bool) *Report {
	gen := j.gen.Load()
	s := j.suite
	name := j.rt.Target.Name()
	_, provider, _ := strings.Cut(name, "/")
	if strings.HasPrefix(name, j.rt.Model+"/") {
		provider = strings.TrimPrefix(name, j.rt.Model+"/")
	}
	rep := &Report{Suite: s.Name, SuiteDigest: hex.EncodeToString(s.Digest[:]), Route: name, Model: j.rt.Model, Index: j.rt.Index,
		Trigger: why, Time: r.cfg.Now(), Threshold: s.Threshold, Path: Path{Provider: provider}, Regressions: []string{}, Changed: []string{}}
	start := time.Now()
	rate := s.Rate
	if rate <= 0 {
		rate = 2
	}
	gap := time.Duration(float64(time.Second) / rate)
	for i, c := range s.Cases {
		if i > 0 {
			if err := sleep(ctx, time.Until(start.Add(time.Duration(i)*gap))); err != nil {
				rep.Cases = append(rep.Cases, CaseResult{ID: c.ID, Reason: "not run: " + reasonOf(err)})
				continue
			}
		}
		cr, a := r.runCase(ctx, j.rt.Target, s, &c)
		rep.Cases = append(rep.Cases, cr)
		rep.PromptTokens += a.Prompt
		rep.CompletionTokens += a.Completion
		if a.Model != "" {
			if seen := rep.Path.Model != ""; seen && (rep.Path.Model != a.Model || rep.Path.Fingerprint != a.Fingerprint) {
				rep.PathMoved = true
			}
			rep.Path.Model, rep.Path.Fingerprint = a.Model, a.Fingerprint
		}
	}
	rep.Duration = time.Since(start)
	rep.Total = len(rep.Cases)
	for _, c := range rep.Cases {
		if c.Pass {
			rep.Passed++
		}
	}
	if rep.Total > 0 {
		rep.Ratio = float64(rep.Passed) / float64(rep.Total)
	}
	rep.tallyContract(s.ContractPassRate)
	rep.OK = rep.Total > 0 && float64(rep.Passed) >= s.Threshold*float64(rep.Total)-1e-9 && !rep.PathMoved && rep.ContractReason() == ""
	if ctx.Err() != nil {
		// Stopped (a reload, a shutdown): an unfinished run says nothing
		// about the route and leaves no evidence; its cases are not failures.
		rep.OK = false
		return rep
	}
	r.compare(rep, pin)

	k := passKey{s.Name, j.rt.Model, j.rt.Index}
	if !rep.OK {
		// A failing run takes the route out of the policies that require
		// the suite at once, before its evidence is written.
		r.mu.Lock()
		r.publish(k, false)
		r.mu.Unlock()
	}
	if r.cfg.OnRun != nil {
		// Evidence first: a passing run is recorded before it makes the
		// route eligible or is shown, so every report shown names its leaf.
		rep.LedgerID = r.cfg.OnRun(*rep)
	}
	r.mu.Lock()
	j.last = rep
	// A run that began before the latest path change says nothing about
	// the new path: it may fail the route, never pass it.
	if rep.OK && j.gen.Load() == gen {
		r.publish(k, true)
	}
	cp := *rep
	r.mu.Unlock()
	if rep.PathMoved {
		// Its own traffic met the new path first, so no client request
		// will trigger on it: run again, on the new path only.
		r.triggerJob(j, TriggerPathChange)
	} else {
		r.scheduleRetry(j, rep.OK)
	}
	return &cp
}

func (r *Runner) runCase(ctx context.Context, t Target, s *Suite, c *Case) (CaseResult, answer) {
	cr := CaseResult{ID: c.ID}
	cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	began := time.Now()
	res, err := t.Chat(cctx, c.Request)
	cr.Latency = time.Since(began)
	if err == nil {
		cr.Contract = res.Contract
	}
	var a answer
	switch {
	case err != nil:
		cr.Reason = "no answer: " + reasonOf(err)
	case res.Code != "":
		cr.Status, cr.Code = res.Status, res.Code
		cr.Reason = "custody rejected the answer: " + res.Code
	case res.Status != 200:
		cr.Status = res.Status
		cr.Reason = fmt.Sprintf("HTTP %d", res.Status)
	default:
		cr.Status = res.Status
		var rerr error
		a, rerr = readAnswer(res.Body)
		if rerr != nil {
			cr.Reason = rerr.Error()
			break
		}
		cr.Reason = c.Assert.Check(a.Content, a.ToolCalls, cr.Latency)
		cr.Pass = cr.Reason == ""
	}
	cr.Digest = outcomeDigest(r.key, hex.EncodeToString(s.Digest[:]), c.ID, cr.Pass, a)
	return cr, a
}

func reasonOf(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "transport failure"
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
