package canary

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody/sim"
)

// TestQuarantineAndRecovery flips a route between honest and faulty and
// follows its health, Quarantined, the status callback and the events.
func TestQuarantineAndRecovery(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	var mu sync.Mutex
	var events []EventKind
	status := map[string]bool{}
	r := newRunner(t, Config{
		Routes:   []Route{{Model: "sim-1", Index: 1, Target: tg}},
		Probes:   []string{ProbeEcho, ProbeNeedle},
		FailRuns: 2, PassRuns: 2,
		OnEvent: func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e.Kind)
		},
		OnStatus: func(route, probe string, ok bool) {
			mu.Lock()
			defer mu.Unlock()
			status[route+" "+probe] = ok
		},
	})
	var since time.Time
	for i, step := range []struct {
		fault       string
		health      Health
		quarantined bool
		event       EventKind // the last event after the step, "" for none new
	}{
		{"", Green, false, ""},
		{string(sim.FaultPlaceholderSubstitution), Amber, false, EventFailure},
		{string(sim.FaultPlaceholderSubstitution), Red, true, EventQuarantined},
		{string(sim.FaultPlaceholderSubstitution), Red, true, EventFailure},
		{"", Red, true, ""},
		{"", Green, false, EventRecovered},
		{string(sim.FaultPlaceholderSubstitution), Amber, false, EventFailure},
		{"", Green, false, ""},
	} {
		tg.setFault(step.fault)
		mu.Lock()
		n := len(events)
		mu.Unlock()
		rep := r.RunOnce(t.Context())[0]
		if rep.Health != step.health {
			t.Errorf("step %d: health %s, want %s", i, rep.Health, step.health)
		}
		if got := r.Quarantined("sim-1", 1); got != step.quarantined {
			t.Errorf("step %d: quarantined = %v", i, got)
		}
		if r.Quarantined("sim-1", 0) || r.Quarantined("other", 1) {
			t.Errorf("step %d: another route is quarantined", i)
		}
		// Since when and why come from the run that made the route red,
		// and stay while it is red, whatever later runs find.
		q, inQ := r.Quarantine("sim-1", 1)
		switch {
		case inQ != step.quarantined:
			t.Errorf("step %d: Quarantine says %v, Quarantined %v", i, inQ, step.quarantined)
		case inQ && step.event == EventQuarantined:
			since = rep.Time
			if !q.Since.Equal(rep.Time) || !strings.Contains(q.Reason, "needle: ") || !strings.HasSuffix(q.Reason, "(2 failing runs in a row)") {
				t.Errorf("step %d: quarantine %+v, want since %v, the needle's evidence and the streak", i, q, rep.Time)
			}
		case inQ && !q.Since.Equal(since):
			t.Errorf("step %d: quarantine since %v moved from %v", i, q.Since, since)
		case !inQ && q != (Quarantine{}):
			t.Errorf("step %d: a route in service has a quarantine %+v", i, q)
		}
		mu.Lock()
		var last EventKind
		if len(events) > n {
			last = events[len(events)-1]
		}
		ok := status["sim-1/sim needle"]
		mu.Unlock()
		if last != step.event {
			t.Errorf("step %d: last new event %q, want %q", i, last, step.event)
		}
		if ok != (step.fault == "") {
			t.Errorf("step %d: needle status %v", i, ok)
		}
	}
}

func TestEnrollmentPersists(t *testing.T) {
	dir := t.TempDir()
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	var events []Event
	cfg := Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeIdentity}, Dir: dir,
		OnEvent: func(e Event) { events = append(events, e) }}
	r1 := newRunner(t, cfg)
	if rep := r1.RunOnce(t.Context())[0]; !rep.OK() || len(events) != 1 || events[0].Kind != EventEnrolled {
		t.Fatalf("first run: %+v, events %+v", rep.Results, events)
	}
	path := enrollmentPath(dir, "sim-1/sim")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("enrollment mode %v", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("passage")) {
		t.Error("enrollment file holds prompt text")
	}

	// A new Runner (a restart) tests against the stored reference: it does
	// not enroll again, and a lying route fails.
	events = nil
	r2 := newRunner(t, cfg)
	res := resultOf(r2.RunOnce(t.Context())[0], ProbeIdentity)
	if !res.OK || !strings.HasPrefix(res.Evidence, "p=") || len(events) != 0 {
		t.Fatalf("after restart: %+v, events %+v", res, events)
	}
	tg.setFault(string(sim.FaultModelLie))
	if res := resultOf(r2.RunOnce(t.Context())[0], ProbeIdentity); res.OK {
		t.Fatalf("model-lie passed after restart: %s", res.Evidence)
	}

	// Re-enrollment is explicit, reported by its returned event, and takes
	// the route as it now is.
	ev, err := r2.Reenroll(t.Context(), "sim-1", 0)
	if err != nil || ev.Kind != EventReenrolled || ev.Name != "sim-1/sim" {
		t.Fatalf("Reenroll = %+v, %v", ev, err)
	}
	if len(events) == 0 || events[len(events)-1].Kind == EventReenrolled {
		t.Errorf("Reenroll went to OnEvent too: %+v", events)
	}
	if res := resultOf(r2.RunOnce(t.Context())[0], ProbeIdentity); !res.OK {
		t.Errorf("after re-enrollment on the variant: %s", res.Evidence)
	}
	if _, err := r2.Reenroll(t.Context(), "sim-1", 7); err == nil {
		t.Error("Reenroll of an unknown route succeeded")
	}

	// A corrupt file fails identity closed until re-enrollment.
	if err := os.WriteFile(path, []byte(`{"version":1,`), 0o600); err != nil {
		t.Fatal(err)
	}
	r3 := newRunner(t, cfg)
	if res := resultOf(r3.RunOnce(t.Context())[0], ProbeIdentity); res.OK || !strings.Contains(res.Evidence, "unreadable") {
		t.Errorf("corrupt enrollment: %+v", res)
	}
	if _, err := r3.Reenroll(t.Context(), "sim-1", 0); err != nil {
		t.Fatal(err)
	}
	if res := resultOf(r3.RunOnce(t.Context())[0], ProbeIdentity); !res.OK {
		t.Errorf("after re-enrolling a corrupt file: %+v", res)
	}
}

// TestTriggerCoalesces holds one triggered run open and fires many
// triggers at it: they make exactly one more run, not one each.
func TestTriggerCoalesces(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	tg.block = make(chan struct{})
	var mu sync.Mutex
	runs := 0
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeEcho},
		OnStatus: func(string, string, bool) { mu.Lock(); runs++; mu.Unlock() }})
	r.Trigger("sim-1", 0)
	for tg.chats.Load() == 0 { // the first run is inside Chat
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { r.Trigger("sim-1", 0) })
	}
	wg.Wait()
	r.Trigger("nope", 3) // unknown: ignored
	close(tg.block)
	r.Wait()
	mu.Lock()
	defer mu.Unlock()
	if runs != 2 {
		t.Errorf("%d runs, want 2 (the one in flight and one coalesced)", runs)
	}
}

// TestRunSchedules runs the scheduler briefly with a short interval.
func TestRunSchedules(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	var mu sync.Mutex
	runs := 0
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeEcho}, Interval: 20 * time.Millisecond, Jitter: 0.5,
		OnStatus: func(string, string, bool) { mu.Lock(); runs++; mu.Unlock() }})
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs < 3 || runs > 60 {
		t.Errorf("%d runs in 500ms at a 20ms interval", runs)
	}
	if got := r.Last(); len(got) != 1 || !got[0].OK() {
		t.Errorf("Last = %+v", got)
	}
}

func TestConfigValidation(t *testing.T) {
	tg := &simTarget{name: "x"}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown probe", Config{Probes: []string{"vibes"}}, `unknown probe "vibes"`},
		{"unsorted depths", Config{NeedleDepths: []float64{0.9, 0.1}}, "needle depths"},
		{"bad alpha", Config{Identity: IdentityConfig{Alpha: 1.5}}, "identity"},
		{"duplicate route", Config{Routes: []Route{{Model: "m", Target: tg}, {Model: "m", Target: tg}}}, "given twice"},
		{"no target", Config{Routes: []Route{{Model: "m"}}}, "no target"},
	} {
		tc.cfg.Counter = counter(t)
		_, err := New(t.Context(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestPrintTable(t *testing.T) {
	var b bytes.Buffer
	reps := []Report{{Name: "sim-1/sim", Results: []ProbeResult{
		{Probe: "echo", OK: true, Evidence: "nonce k9XbQ2mZ7w returned", Duration: 3 * time.Millisecond},
		{Probe: "needle", Code: "prompt_token_mismatch", Evidence: "custody rejected:\tprompt_token_mismatch\n(status 502)"},
		{Probe: "oversize", Status: StatusSkipped, Evidence: "no known capacity"},
		{Probe: "identity", Status: StatusInconclusive, Evidence: "upstream failed 3 tries: status 503"},
	}}}
	if err := PrintTable(&b, reps); err != nil {
		t.Fatal(err)
	}
	want := "ROUTE      PROBE     RESULT                      TIME  EVIDENCE\n" +
		"sim-1/sim  echo      ok                          3ms   nonce k9XbQ2mZ7w returned\n" +
		"sim-1/sim  needle    FAIL prompt_token_mismatch  0s    custody rejected: prompt_token_mismatch (status 502)\n" +
		"sim-1/sim  oversize  skipped                     0s    no known capacity\n" +
		"sim-1/sim  identity  inconclusive                0s    upstream failed 3 tries: status 503\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	if AllOK(reps) || !AllOK(reps[:0]) {
		t.Error("AllOK")
	}
	// Skipped and inconclusive rows do not fail `custody canary`.
	reps[0].Results = append(reps[0].Results[:1:1], reps[0].Results[2:]...)
	if !AllOK(reps) {
		t.Error("AllOK with only ok, skipped and inconclusive rows")
	}
}

func BenchmarkQuarantined(b *testing.B) {
	r := newRunner(b, Config{Routes: []Route{{Model: "sim-1", Target: &simTarget{name: "x"}}}})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r.Quarantined("sim-1", 0) {
				b.Fatal("quarantined")
			}
		}
	})
}
