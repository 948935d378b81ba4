package canary

import (
	"strings"
	"sync"
	"testing"

	"github.com/custody-gateway/custody/sim"
)

// TestSkippedProbes: a probe that cannot run on a route reports skipped
// with its reason on every run, Plan warns about it before any run, the
// route's health and custody_canary_status ignore it, and the probes that
// can run still do.
func TestSkippedProbes(t *testing.T) {
	for _, c := range []struct {
		name     string
		capacity int // the route's; the simulator holds 4096 in any case
		probe    string
		reason   string // in the evidence and the warning
	}{
		{"needle on a 64-token model", 64, ProbeNeedle, "needles alone take"},
		{"needle without capacity", 0, ProbeNeedle, "no known capacity"},
		{"oversize without capacity", 0, ProbeOversize, "no known capacity"},
		{"identity below one sample", 40, ProbeIdentity, "no enrollment can be taken"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), c.capacity)
			var mu sync.Mutex
			status := map[string]bool{}
			var events []Event
			r := newRunner(t, Config{
				Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeEcho, c.probe},
				FailRuns: 1,
				OnStatus: func(route, probe string, ok bool) {
					mu.Lock()
					defer mu.Unlock()
					status[probe] = ok
				},
				OnEvent: func(e Event) { events = append(events, e) },
			})
			plan := r.Plan()
			if len(plan) != 1 || plan[0].Probe != c.probe || plan[0].Route != "sim-1/sim" || !strings.Contains(plan[0].Reason, c.reason) {
				t.Fatalf("plan %+v, want one warning for %s with %q", plan, c.probe, c.reason)
			}
			if s := plan[0].String(); !strings.Contains(s, c.probe) || !strings.Contains(s, "sim-1/sim") {
				t.Errorf("warning text %q", s)
			}
			for run := range 3 {
				rep := r.RunOnce(t.Context())[0]
				res := resultOf(rep, c.probe)
				if res.Status != StatusSkipped || res.OK || !strings.Contains(res.Evidence, c.reason) {
					t.Errorf("run %d: %s %+v, want skipped with %q", run, c.probe, res, c.reason)
				}
				if e := resultOf(rep, ProbeEcho); e.Status != StatusOK {
					t.Errorf("run %d: echo %+v", run, e)
				}
				if !rep.OK() || rep.Health != Green || r.Quarantined("sim-1", 0) {
					t.Errorf("run %d: OK %v health %s quarantined %v", run, rep.OK(), rep.Health, r.Quarantined("sim-1", 0))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if _, set := status[c.probe]; set || !status[ProbeEcho] {
				t.Errorf("status %v: a skipped probe has no custody_canary_status", status)
			}
			if len(events) != 0 {
				t.Errorf("events %+v", events)
			}
		})
	}
	t.Run("every probe runs with capacity", func(t *testing.T) {
		tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
		r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: allProbes()})
		if plan := r.Plan(); len(plan) != 0 {
			t.Errorf("plan %+v", plan)
		}
	})
}
