package canary

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody/sim"
)

// flakyTarget fails the requests that fail says to fail (by the count of
// calls so far, from 0), with the result or error it gives, and passes the
// others to the simulator.
type flakyTarget struct {
	*simTarget
	calls atomic.Int64
	mu    sync.Mutex
	fail  func(call int64) (Result, error, bool)
}

func (f *flakyTarget) set(fail func(call int64) (Result, error, bool)) {
	f.mu.Lock()
	f.fail = fail
	f.mu.Unlock()
	f.calls.Store(0)
}

func (f *flakyTarget) Chat(ctx context.Context, req ChatRequest) (Result, error) {
	n := f.calls.Add(1) - 1
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail != nil {
		if res, err, ok := fail(n); ok {
			return res, err
		}
	}
	return f.simTarget.Chat(ctx, req)
}

var unavailable = Result{Status: http.StatusServiceUnavailable, Body: []byte(`{"error":{"message":"overloaded"}}`)}

// TestIdentityInconclusiveOnUpstreamErrors: an upstream that errors or
// times out during the identity probe makes it inconclusive after two
// retries, never failed: the route is not quarantined, the streaks do not
// move and custody_canary_status keeps its value. A failure that a retry
// cures passes; a custody rejection is still a failure.
func TestIdentityInconclusiveOnUpstreamErrors(t *testing.T) {
	tg := &flakyTarget{simTarget: newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)}
	var mu sync.Mutex
	var status []bool
	var events []EventKind
	r := newRunner(t, Config{
		Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeIdentity},
		FailRuns: 1, PassRuns: 1,
		Identity: IdentityConfig{RetryBackoff: time.Millisecond},
		OnStatus: func(route, probe string, ok bool) {
			mu.Lock()
			defer mu.Unlock()
			status = append(status, ok)
		},
		OnEvent: func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e.Kind)
		},
	})
	run := func() ProbeResult {
		t.Helper()
		return resultOf(r.RunOnce(t.Context())[0], ProbeIdentity)
	}
	t.Run("enrollment under errors", func(t *testing.T) {
		tg.set(func(int64) (Result, error, bool) { return unavailable, nil, true })
		if res := run(); res.Status != StatusInconclusive || !strings.Contains(res.Evidence, "enrolling") {
			t.Errorf("%+v", res)
		}
		if got := tg.calls.Load(); got != 3 {
			t.Errorf("%d calls, want 1 + 2 retries", got)
		}
	})
	tg.set(nil)
	if res := run(); res.Status != StatusOK || !strings.HasPrefix(res.Evidence, "enrolled") {
		t.Fatalf("enrollment: %+v", res)
	}
	for _, c := range []struct {
		name string
		fail func(int64) (Result, error, bool)
		want Status
	}{
		{"5xx", func(int64) (Result, error, bool) { return unavailable, nil, true }, StatusInconclusive},
		{"timeout", func(int64) (Result, error, bool) { return Result{}, context.DeadlineExceeded, true }, StatusInconclusive},
		{"transport error", func(int64) (Result, error, bool) { return Result{}, errors.New("connection reset"), true }, StatusInconclusive},
		{"custody upstream_unavailable", func(int64) (Result, error, bool) {
			return Result{Status: http.StatusBadGateway, Code: "upstream_unavailable"}, nil, true
		}, StatusInconclusive},
		{"429", func(int64) (Result, error, bool) { return Result{Status: http.StatusTooManyRequests}, nil, true }, StatusInconclusive},
		{"custody overloaded", func(int64) (Result, error, bool) { // its in-flight budget was full
			return Result{Status: http.StatusServiceUnavailable, Code: "overloaded"}, nil, true
		}, StatusInconclusive},
		{"cured by a retry", func(n int64) (Result, error, bool) { return unavailable, nil, n < 2 }, StatusOK},
		{"5xx in the middle", func(n int64) (Result, error, bool) { return unavailable, nil, n >= 7 }, StatusInconclusive},
		{"custody rejection", func(int64) (Result, error, bool) {
			return Result{Status: http.StatusBadGateway, Code: "model_mismatch"}, nil, true
		}, StatusFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			status, events = nil, nil
			mu.Unlock()
			tg.set(c.fail)
			defer tg.set(nil)
			for i := range 3 { // FailRuns is 1: one failure would quarantine
				rep := r.RunOnce(t.Context())[0]
				res := resultOf(rep, ProbeIdentity)
				if res.Status != c.want {
					t.Fatalf("run %d: %+v, want %s", i, res, c.want)
				}
				if c.want == StatusInconclusive && (rep.Health != Green || r.Quarantined("sim-1", 0) || !rep.OK()) {
					t.Errorf("run %d: health %s, quarantined %v", i, rep.Health, r.Quarantined("sim-1", 0))
				}
				if c.want == StatusFailed {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			switch c.want {
			case StatusInconclusive:
				if len(status) != 0 || len(events) != 0 {
					t.Errorf("status %v, events %v: an inconclusive probe reported", status, events)
				}
			case StatusOK:
				if len(status) != 3 || !status[0] {
					t.Errorf("status %v", status)
				}
			case StatusFailed:
				if len(status) != 1 || status[0] || !r.Quarantined("sim-1", 0) {
					t.Errorf("status %v, quarantined %v", status, r.Quarantined("sim-1", 0))
				}
			}
		})
	}
}

// TestInconclusiveLeavesRedRed: a quarantined route whose identity probe
// is inconclusive stays quarantined (an unreachable upstream does not
// prove the model came back).
func TestInconclusiveLeavesRedRed(t *testing.T) {
	tg := &flakyTarget{simTarget: newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)}
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeEcho, ProbeIdentity},
		FailRuns: 1, PassRuns: 1, Identity: IdentityConfig{RetryBackoff: time.Millisecond}})
	r.RunOnce(t.Context()) // enrolls
	tg.setFault(string(sim.FaultModelLie))
	if rep := r.RunOnce(t.Context())[0]; rep.Health != Red {
		t.Fatalf("model-lie: health %s, %+v", rep.Health, rep.Results)
	}
	tg.setFault("")
	// Echo is the first request of a run, identity's are the rest.
	tg.set(func(n int64) (Result, error, bool) { return unavailable, nil, n > 0 })
	rep := r.RunOnce(t.Context())[0]
	if res := resultOf(rep, ProbeIdentity); res.Status != StatusInconclusive || rep.Health != Red || !r.Quarantined("sim-1", 0) {
		t.Errorf("identity %+v, health %s", res, rep.Health)
	}
}
