package canary

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody/sim"
)

// TestAdoptKeepsQuarantine: a runner built for a reloaded config keeps
// the old one's quarantine of the same route; another route is not
// taken for it.
func TestAdoptKeepsQuarantine(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	tg.setFault(string(sim.FaultPlaceholderSubstitution))
	old := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Index: 0, Target: tg}}, Probes: []string{ProbeNeedle}, FailRuns: 1})
	old.RunOnce(t.Context())
	if !old.Quarantined("sim-1", 0) {
		t.Fatal("the failing route is not quarantined")
	}
	other := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	other.name = "sim-1/elsewhere" // route 0 now goes to another provider
	for _, c := range []struct {
		target *simTarget
		want   bool
	}{{tg, true}, {other, false}} {
		r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Index: 0, Target: c.target}}, Probes: []string{ProbeNeedle}, FailRuns: 1})
		r.Adopt(old)
		if got := r.Quarantined("sim-1", 0); got != c.want {
			t.Errorf("%s: quarantined %v after Adopt, want %v", c.target.name, got, c.want)
		}
		if got := len(r.Last()); got != map[bool]int{true: 1, false: 0}[c.want] {
			t.Errorf("%s: %d last reports adopted", c.target.name, got)
		}
	}
}

// TestCancelledRunIsNoFailure: a run cut short by its context (a reload
// stops the old runner) changes no status and no health, and sends no
// event.
func TestCancelledRunIsNoFailure(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	tg.block = make(chan struct{})
	var events, statuses atomic.Int32
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeEcho, ProbeNeedle}, FailRuns: 1,
		OnEvent: func(Event) { events.Add(1) }, OnStatus: func(string, string, bool) { statuses.Add(1) }})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Report)
	go func() {
		rep, _ := r.RunRoute(ctx, "sim-1", 0)
		done <- rep
	}()
	for tg.chats.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if events.Load() != 0 || statuses.Load() != 0 || r.Quarantined("sim-1", 0) || len(r.Last()) != 0 {
		t.Errorf("a cancelled run counted: %d events, %d statuses, quarantined %v, %d reports", events.Load(), statuses.Load(), r.Quarantined("sim-1", 0), len(r.Last()))
	}
}
