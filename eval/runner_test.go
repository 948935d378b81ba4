package eval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTarget answers every case with answer(prompt), as model/fingerprint.
type fakeTarget struct {
	name   string
	mu     sync.Mutex
	model  string
	answer func(prompt string) string
	calls  atomic.Int64
	before func(n int64) // called before answering call n (1-based)
}

func (f *fakeTarget) Name() string { return f.name }

func (f *fakeTarget) Chat(ctx context.Context, req Request) (Result, error) {
	n := f.calls.Add(1)
	if f.before != nil {
		f.before(n)
	}
	f.mu.Lock()
	model, answer := f.model, f.answer
	f.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"model": model, "system_fingerprint": "fp_" + model,
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer(req.Messages[len(req.Messages)-1].Content)}}},
		"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 2}})
	return Result{Status: 200, Body: body}, nil
}

func (f *fakeTarget) set(model string, answer func(string) string) {
	f.mu.Lock()
	f.model, f.answer = model, answer
	f.mu.Unlock()
}

func echo(p string) string  { return p }
func shout(p string) string { return "NO" }
func testSuite(t *testing.T, threshold float64) *Suite {
	t.Helper()
	cases, err := Parse("s.jsonl", []byte(`{"id": "one", "prompt": "alpha", "assert": {"equals": "alpha"}}
{"id": "two", "prompt": "beta", "assert": {"contains": "beta"}}
{"id": "three", "prompt": "gamma", "assert": {"regex": "^gamma$"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	return &Suite{Name: "support", Cases: cases, Threshold: threshold, Rate: 1000, Digest: [32]byte{1}}
}

func newTestRunner(t *testing.T, cfg Config) *Runner {
	t.Helper()
	r, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Wait)
	return r
}

// TestRunnerBaselineAndPathChange: the first passing run records the
// baseline and passes the route; a path change makes the route
// ineligible at once and re-runs the suite, which now fails and names
// the regressed cases; every run reaches OnRun.
func TestRunnerBaselineAndPathChange(t *testing.T) {
	dir := t.TempDir()
	tg := &fakeTarget{name: "m/p"}
	tg.set("m-0827", echo)
	var runs atomic.Int64
	r := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Index: 0, Target: tg}}, Dir: dir,
		OnRun: func(rep Report) string { runs.Add(1); return "id-" + rep.Suite }})
	if r.Passed("support", "m", 0) {
		t.Fatal("passed before any run")
	}
	reps, err := r.RunOnce(t.Context(), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := reps[0]
	if !rep.OK || rep.Passed != 3 || rep.Total != 3 || rep.Baseline == nil || !rep.Baseline.Recorded || rep.Baseline.Pinned ||
		rep.Path != (Path{"p", "m-0827", "fp_m-0827"}) || rep.PromptTokens != 30 || rep.CompletionTokens != 6 || rep.LedgerID != "id-support" {
		t.Fatalf("first run: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, "support", "m%2Fp.json")); err != nil {
		t.Errorf("baseline not on disk: %v", err)
	}
	if !r.Passed("support", "m", 0) || r.Passed("support", "m", 1) || r.Passed("other", "m", 0) {
		t.Error("Passed does not follow the run")
	}

	tg.set("m-0901", shout)
	r.Trigger("m", 0)
	if r.Passed("support", "m", 0) {
		t.Error("still passed right after the path change")
	}
	r.Wait()
	last := r.Last()[0]
	if last.OK || last.Passed != 0 || last.Trigger != TriggerPathChange || last.Path.Model != "m-0901" ||
		!slices.Equal(last.Regressions, []string{"one", "two", "three"}) || last.Baseline == nil || last.Baseline.Recorded {
		t.Fatalf("drifted run: %+v", last)
	}
	if !slices.Equal(last.Failing(), []string{"one", "two", "three"}) || last.Cases[0].Reason != "equals: the answer differs" {
		t.Errorf("failing: %v %+v", last.Failing(), last.Cases[0])
	}
	if r.Passed("support", "m", 0) || runs.Load() != 2 {
		t.Errorf("passed %v after a failing run; %d runs recorded", r.Passed("support", "m", 0), runs.Load())
	}

	// A new Runner on the same dir compares with the stored baseline.
	tg.set("m-0827", echo)
	r2 := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Index: 0, Target: tg}}, Dir: dir})
	reps, _ = r2.RunOnce(t.Context(), RunOptions{})
	if b := reps[0].Baseline; !reps[0].OK || b == nil || b.Recorded || b.Path.Model != "m-0827" || len(reps[0].Changed) != 0 {
		t.Errorf("after restart: %+v", reps[0])
	}
	// Pinning records a failing run as the baseline.
	tg.set("m-0901", shout)
	reps, _ = r2.RunOnce(t.Context(), RunOptions{Pin: true})
	if b := reps[0].Baseline; reps[0].OK || b == nil || !b.Recorded || !b.Pinned {
		t.Errorf("pin: %+v", reps[0])
	}
	reps, _ = r2.RunOnce(t.Context(), RunOptions{})
	if b := reps[0].Baseline; b == nil || !b.Pinned || len(reps[0].Regressions) != 0 || len(reps[0].Changed) != 0 {
		t.Errorf("after pin: %+v", reps[0])
	}
}

// TestThreshold: a pass ratio at the threshold passes, under it fails.
func TestThreshold(t *testing.T) {
	half := func(p string) string {
		if p == "alpha" {
			return "alpha"
		}
		return "x"
	}
	for _, tc := range []struct {
		threshold float64
		answer    func(string) string
		ok        bool
	}{{1, echo, true}, {1, half, false}, {0.33, half, true}, {0.34, half, false}, {0, shout, true}} {
		tg := &fakeTarget{name: "m/p"}
		tg.set("m", tc.answer)
		r := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, tc.threshold)}, Routes: []Route{{Model: "m", Target: tg}}})
		reps, _ := r.RunOnce(t.Context(), RunOptions{})
		if reps[0].OK != tc.ok {
			t.Errorf("threshold %v, %d/%d: ok %v", tc.threshold, reps[0].Passed, reps[0].Total, reps[0].OK)
		}
	}
}

// TestStaleRunCannotPass: a run that began before a path change and
// passes does not make the new path eligible.
func TestStaleRunCannotPass(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	tg := &fakeTarget{name: "m/p"}
	tg.set("m", echo)
	tg.before = func(n int64) {
		switch n {
		case 1:
			close(started)
			<-release
		case 4: // the triggered run: held until checked
			<-release
		}
	}
	r := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Target: tg}}})
	done := make(chan []Report)
	go func() { reps, _ := r.RunOnce(context.Background(), RunOptions{}); done <- reps }()
	<-started
	r.Trigger("m", 0)
	release <- struct{}{}
	if reps := <-done; !reps[0].OK {
		t.Fatalf("the first run failed: %+v", reps[0])
	}
	if r.Passed("m", "m", 0) || r.Passed("support", "m", 0) {
		t.Error("a run older than the path change passed the route")
	}
	close(release)
	r.Wait()
	if !r.Passed("support", "m", 0) {
		t.Error("the run after the path change passed, the route did not")
	}
}

// TestRate: cases are spaced by 1/rate. The assertion is a lower bound,
// which load cannot break: the third case cannot start before 200ms on
// the monotonic clock, however late the machine runs it.
func TestRate(t *testing.T) {
	tg := &fakeTarget{name: "m/p"}
	tg.set("m", echo)
	s := testSuite(t, 1)
	s.Rate = 10
	r := newTestRunner(t, Config{Suites: []*Suite{s}, Routes: []Route{{Model: "m", Target: tg}}})
	start := time.Now()
	r.RunOnce(t.Context(), RunOptions{})
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("3 cases at 10/s took %s", d)
	}
}

// TestSelection: suites cover their routes; RunOnce selects by suite and
// route and says when nothing matches.
func TestSelection(t *testing.T) {
	a, b := &fakeTarget{name: "m/a"}, &fakeTarget{name: "m/b"}
	a.set("m", echo)
	b.set("m", echo)
	s := testSuite(t, 1)
	s.Routes = []string{"m/b"}
	r := newTestRunner(t, Config{Suites: []*Suite{s}, Routes: []Route{{Model: "m", Index: 0, Target: a}, {Model: "m", Index: 1, Target: b}}})
	if got := r.Covering("m", 0); len(got) != 0 {
		t.Errorf("covering route a: %v", got)
	}
	reps, err := r.RunOnce(t.Context(), RunOptions{Suite: "support"})
	if err != nil || len(reps) != 1 || reps[0].Route != "m/b" || a.calls.Load() != 0 {
		t.Errorf("%+v %v", reps, err)
	}
	if _, err := r.RunOnce(t.Context(), RunOptions{Route: "m/a"}); err != ErrNoMatch {
		t.Errorf("uncovered route: %v", err)
	}
}

// TestPreviousRunnerCarriesOver: a reload (Adopt) keeps the pass state and last
// report of unchanged suites on unchanged routes, and runs only the rest
// at start; a changed suite starts over.
func TestPreviousRunnerCarriesOver(t *testing.T) {
	tg := &fakeTarget{name: "m/p"}
	tg.set("m", echo)
	old := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Target: tg}}})
	old.RunOnce(t.Context(), RunOptions{})
	calls := tg.calls.Load()

	kept := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Target: tg}}})
	kept.Adopt(old)
	if !kept.Passed("support", "m", 0) || len(kept.Last()) != 1 {
		t.Fatalf("unchanged suite: passed %v, %d reports", kept.Passed("support", "m", 0), len(kept.Last()))
	}
	ctx, cancel := context.WithCancel(t.Context())
	go kept.Run(ctx)
	time.Sleep(50 * time.Millisecond)
	cancel()
	kept.Wait()
	if tg.calls.Load() != calls {
		t.Errorf("an unchanged suite ran again at start")
	}

	changed := testSuite(t, 1)
	changed.Digest = [32]byte{2}
	fresh := newTestRunner(t, Config{Suites: []*Suite{changed}, Routes: []Route{{Model: "m", Target: tg}}})
	fresh.Adopt(old)
	if fresh.Passed("support", "m", 0) || len(fresh.Last()) != 0 {
		t.Error("a changed suite kept the old pass state")
	}
}

// TestInterval: Run runs every suite at start, then on its interval.
func TestInterval(t *testing.T) {
	tg := &fakeTarget{name: "m/p"}
	tg.set("m", echo)
	s := testSuite(t, 1)
	s.Interval = 30 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var triggers sync.Map
	r := newTestRunner(t, Config{Suites: []*Suite{s}, Routes: []Route{{Model: "m", Target: tg}}, OnRun: func(rep Report) string {
		triggers.Store(rep.Trigger, true)
		return ""
	}})
	go r.Run(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, start := triggers.Load(TriggerStart)
		_, interval := triggers.Load(TriggerInterval)
		if start && interval {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs: start %v, interval %v", start, interval)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
}

// TestPathMovedDuringARun: a run whose answers come from two paths does
// not pass the route, whatever its ratio, and a run on the new path
// follows by itself.
func TestPathMovedDuringARun(t *testing.T) {
	tg := &fakeTarget{name: "m/p"}
	tg.set("m-0827", echo)
	tg.before = func(n int64) {
		if n == 2 {
			tg.set("m-0901", echo)
		}
	}
	r := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Target: tg}}})
	reps, _ := r.RunOnce(t.Context(), RunOptions{})
	if rep := reps[0]; rep.OK || !rep.PathMoved || rep.Passed != 3 || rep.Path.Model != "m-0901" {
		t.Fatalf("a run across two paths: %+v", rep)
	}
	r.Wait()
	if last := r.Last()[0]; !last.OK || last.PathMoved || last.Trigger != TriggerPathChange || !r.Passed("support", "m", 0) {
		t.Errorf("the run after it: %+v, passed %v", last, r.Passed("support", "m", 0))
	}
}

// TestStoppedRunLeavesNothing: a run cut short by its context (a reload,
// a shutdown) is not recorded and does not change the pass state.
func TestStoppedRunLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	tg := &fakeTarget{name: "m/p"}
	tg.set("m", echo)
	tg.before = func(n int64) {
		if n == 2 {
			cancel()
		}
	}
	var runs atomic.Int64
	r := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Target: tg}},
		OnRun: func(Report) string { runs.Add(1); return "" }})
	reps, _ := r.RunOnce(ctx, RunOptions{})
	if reps[0].OK || runs.Load() != 0 || len(r.Last()) != 0 || r.Passed("support", "m", 0) {
		t.Errorf("a stopped run: %+v, %d recorded, %d last", reps[0], runs.Load(), len(r.Last()))
	}
}

// TestRetryAfterFailure: under Run, a failed suite runs again after a
// backoff until it passes, so that a route that returned to a known path
// (no path change to trigger on) becomes eligible again by itself.
func TestRetryAfterFailure(t *testing.T) {
	tg := &fakeTarget{name: "m/p"}
	tg.set("m", shout)
	var mu sync.Mutex
	var times []time.Time
	var triggers []Trigger
	r := newTestRunner(t, Config{Suites: []*Suite{testSuite(t, 1)}, Routes: []Route{{Model: "m", Target: tg}},
		RetryMin: 20 * time.Millisecond, RetryMax: time.Second,
		OnRun: func(rep Report) string {
			mu.Lock()
			defer mu.Unlock()
			times, triggers = append(times, time.Now()), append(triggers, rep.Trigger)
			if len(times) == 3 {
				tg.set("m", echo) // the upstream comes back
			}
			return ""
		}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go r.Run(ctx)
	waitUntil(t, func() bool { return r.Passed("support", "m", 0) })
	mu.Lock()
	defer mu.Unlock()
	if len(triggers) != 4 || triggers[0] != TriggerStart || triggers[1] != TriggerRetry || triggers[3] != TriggerRetry {
		t.Fatalf("runs: %v", triggers)
	}
	// Lower bounds only, which load cannot break: OnRun is called before
	// the retry is armed, and a timer never fires early.
	if first, second := times[1].Sub(times[0]), times[2].Sub(times[1]); first < 20*time.Millisecond || second < 40*time.Millisecond {
		t.Errorf("retries after %s and %s, want at least 20ms and 40ms", first, second)
	}
	if len(r.Last()) != 1 || !r.Last()[0].OK {
		t.Errorf("last: %+v", r.Last())
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
