package canary

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/tokenize"
)

const testCapacity = 4096

func allProbes() []string { return Probes() }

func TestHonestUpstreamPassesEveryProbe(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	var events []Event
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Index: 0, Target: tg}}, Probes: allProbes(), OnEvent: func(e Event) { events = append(events, e) }})
	for run := range 3 { // the first run enrolls identity, the next ones test it
		reps := r.RunOnce(t.Context())
		if len(reps) != 1 {
			t.Fatalf("run %d: %d reports", run, len(reps))
		}
		for _, res := range reps[0].Results {
			if !res.OK {
				t.Errorf("run %d: %s failed: %s", run, res.Probe, res.Evidence)
			}
		}
		if got := len(reps[0].Results); got != len(Probes()) {
			t.Errorf("run %d: %d results, want %d", run, got, len(Probes()))
		}
		if reps[0].Health != Green {
			t.Errorf("run %d: health %s", run, reps[0].Health)
		}
		if run > 0 && !strings.HasPrefix(resultOf(reps[0], ProbeIdentity).Evidence, "p=") {
			t.Errorf("run %d: identity did not test: %s", run, resultOf(reps[0], ProbeIdentity).Evidence)
		}
	}
	if len(events) != 1 || events[0].Kind != EventEnrolled {
		t.Errorf("events = %+v, want one enrollment", events)
	}
}

// TestFaultCaughtByNamedProbe enrolls on the honest simulator, turns a
// fault on, and requires the probe named for it to fail.
func TestFaultCaughtByNamedProbe(t *testing.T) {
	for _, tc := range []struct {
		fault       sim.Fault
		probe       string
		checkPrompt bool   // the test target applies custody's prompt band
		code        string // the custody code the probe must report
		evidence    string // a fragment of the evidence
	}{
		{fault: sim.FaultModelLie, probe: ProbeIdentity, evidence: "answers differ"},
		{fault: sim.FaultSnapshotDrift, probe: ProbeIdentity, evidence: "model sim-1-0901, enrolled sim-1"},
		{fault: sim.FaultPlaceholderSubstitution, probe: ProbeNeedle, checkPrompt: true, code: "prompt_token_mismatch", evidence: "custody rejected"},
		{fault: sim.FaultPlaceholderSubstitution, probe: ProbeNeedle, evidence: "3/3 needles missing"},
		{fault: sim.FaultStaleKV, probe: ProbeEcho, evidence: "live canary secret canary:sim-1/sim#"},
		{fault: sim.FaultOversize200, probe: ProbeOversize, evidence: "answered 200"},
	} {
		name := string(tc.fault)
		if tc.checkPrompt {
			name += "/with-band"
		}
		t.Run(name, func(t *testing.T) {
			tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
			tg.checkPrompt = tc.checkPrompt
			r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: allProbes()})
			if rep := r.RunOnce(t.Context())[0]; !rep.OK() {
				t.Fatalf("honest run failed: %+v", rep.Results)
			}
			tg.setFault(string(tc.fault))
			rep := r.RunOnce(t.Context())[0]
			res := resultOf(rep, tc.probe)
			if res.OK {
				t.Fatalf("%s passed under %s: %s", tc.probe, tc.fault, res.Evidence)
			}
			if res.Code != tc.code {
				t.Errorf("code = %q, want %q", res.Code, tc.code)
			}
			if !strings.Contains(res.Evidence, tc.evidence) {
				t.Errorf("evidence %q lacks %q", res.Evidence, tc.evidence)
			}
			for _, o := range rep.Results {
				t.Logf("%-8s ok=%v %s", o.Probe, o.OK, o.Evidence)
			}
		})
	}
}

// TestIdentityStatisticCatchesDrift shows snapshot-drift is caught by the
// statistical test itself, not only by the renamed model.
func TestIdentityStatisticCatchesDrift(t *testing.T) {
	base := newSim(t, sim.Config{Capacity: testCapacity})
	tg := newTarget(t, base, testCapacity)
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeIdentity}})
	r.RunOnce(t.Context())
	rt := r.routes[0]
	e, _ := rt.enrollment("")
	for _, f := range []string{string(sim.FaultSnapshotDrift), string(sim.FaultModelLie), ""} {
		tg.setFault(f)
		cur, _, _, res := collect(t.Context(), tg, e.params(), 4, e.Model, 1, retryPolicy{})
		if res != nil {
			t.Fatal(res.Evidence)
		}
		_, p := identityTest(e.Samples, cur, r.cfg.Identity, testRand())
		if differs := p <= r.cfg.Identity.Alpha; differs != (f != "") {
			t.Errorf("fault %q: p=%.4f", f, p)
		}
	}
}

// TestEchoCatchesForeignNonce: an answer carrying an id that is neither
// its own nonce nor a canary secret fails echo too (stale KV from a
// request custody did not plant).
func TestEchoCatchesForeignNonce(t *testing.T) {
	base := newSim(t, sim.Config{Capacity: testCapacity})
	tg := newTarget(t, base, testCapacity)
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeEcho}})
	// A live request leaves a page holding its own id behind.
	other := &simTarget{name: "live", base: base, model: "sim-1", counter: tg.counter}
	if res, err := other.Chat(t.Context(), ChatRequest{Messages: []Message{{Role: "user", Content: "order Q7Wk29Xb3 shipped"}}, MaxTokens: 4}); err != nil || res.Status != http.StatusOK {
		t.Fatalf("live request: %v %d", err, res.Status)
	}
	tg.setFault(string(sim.FaultStaleKV))
	res := resultOf(r.RunOnce(t.Context())[0], ProbeEcho)
	if res.OK || !strings.Contains(res.Evidence, "1 foreign ids") {
		t.Fatalf("echo = %+v, want a foreign-id failure", res)
	}
	if strings.Contains(res.Evidence, "Q7Wk29Xb3") {
		t.Errorf("evidence shows the foreign id: %s", res.Evidence)
	}
}

// TestSecretCaughtInLiveTraffic: the secret probe registers its secret
// before sending it; a live request of another tenant decoded from the
// secret request's stale pages carries it, and the matcher fed by the
// registration hook finds it.
func TestSecretCaughtInLiveTraffic(t *testing.T) {
	base := newSim(t, sim.Config{Capacity: testCapacity})
	tg := newTarget(t, base, testCapacity)
	m := newMemSecrets()
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeSecret}, AddSecret: m.add, RemoveSecret: m.remove})
	if rep := r.RunOnce(t.Context())[0]; !rep.OK() {
		t.Fatalf("secret probe: %+v", rep.Results)
	}
	live := &simTarget{name: "live", base: base, model: "sim-1", counter: tg.counter}
	for _, tc := range []struct {
		fault string
		want  bool
	}{{"", false}, {string(sim.FaultStaleKV), true}} {
		live.setFault(tc.fault)
		res, err := live.Chat(t.Context(), ChatRequest{Messages: []Message{{Role: "user", Content: "what is the weather like"}}, MaxTokens: 16, Tenant: "acme"})
		if err != nil || res.Status != http.StatusOK {
			t.Fatalf("live request: %v %d", err, res.Status)
		}
		label, found := m.scan(res.Body)
		if found != tc.want {
			t.Errorf("fault %q: secret found=%v (label %q), want %v", tc.fault, found, label, tc.want)
		}
		if found && !strings.HasPrefix(label, "canary:sim-1/sim#") {
			t.Errorf("label %q", label)
		}
		if !found {
			// A clean request may not take the secret's page; re-plant so
			// the stale case reads it.
			r.RunOnce(t.Context())
		}
	}
}

func TestSecretsBounded(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	m := newMemSecrets()
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeSecret}, AddSecret: m.add, RemoveSecret: m.remove, MaxSecrets: 3})
	for range 5 {
		r.RunOnce(t.Context())
	}
	if got := m.len(); got != 3 {
		t.Errorf("matcher holds %d secrets, want 3", got)
	}
	if got := r.secrets.len(); got != 3 {
		t.Errorf("runner holds %d secrets, want 3", got)
	}
	r.secrets.mu.Lock()
	oldest := r.secrets.live[0].label
	r.secrets.mu.Unlock()
	if !strings.HasSuffix(oldest, "#3") {
		t.Errorf("oldest live secret %s, want #3", oldest)
	}
}

func TestNeedlePromptWithinFraction(t *testing.T) {
	c := counter(t)
	for _, budget := range []int{200, 2048, 16384} {
		needles := []string{nonce(10), nonce(10), nonce(10)}
		m, n, err := haystack(c, budget, "head", needles, []float64{0.1, 0.5, 0.9})
		if err != nil {
			t.Fatal(err)
		}
		if n > budget || n < budget-40 {
			t.Errorf("budget %d: prompt of %d tokens", budget, n)
		}
		for _, nd := range needles {
			if !strings.Contains(m.Content, nd) {
				t.Errorf("budget %d: needle missing", budget)
			}
		}
		if i0, i2 := strings.Index(m.Content, needles[0]), strings.Index(m.Content, needles[2]); float64(i0) > 0.2*float64(len(m.Content)) || float64(i2) < 0.8*float64(len(m.Content)) {
			t.Errorf("budget %d: needles at %d and %d of %d", budget, i0, i2, len(m.Content))
		}
	}
	if _, _, err := haystack(c, 5, "head", nil, nil); err == nil {
		t.Error("a 5-token budget built a prompt")
	}
}

func TestNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := nonce(10)
		if len(nonceLike(n)) != 1 || seen[n] {
			t.Fatalf("nonce %q not nonce-like or repeated", n)
		}
		seen[n] = true
	}
	for _, tc := range []struct {
		text string
		want int
	}{{"plain words only", 0}, {"k9XbQ2mZ7w.", 1}, {"abcdefgh 12345678", 0}, {"(a1b2c3d4) x9y8z7w6", 2}, {"é1é1é1é1é1", 0}} {
		if got := len(nonceLike(tc.text)); got != tc.want {
			t.Errorf("nonceLike(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// bytesTarget counts one token per byte, as a route configured with
// `tokenizer: bytes` would.
type bytesTarget struct{ *simTarget }

func (bytesTarget) Counter() tokenize.Counter { return tokenize.Bytes{} }

// TestCountingTargetSizesPrompts: a target's own tokenizer sizes the long
// prompts (here bytes: the needle prompt is 2048 bytes, and the oversize
// prompt just over 4096 bytes, which the simulator, counting o200k tokens,
// accepts: that oversize then fails shows whose count sized it).
func TestCountingTargetSizesPrompts(t *testing.T) {
	base := newSim(t, sim.Config{Capacity: testCapacity})
	tg := bytesTarget{newTarget(t, base, testCapacity)}
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeNeedle, ProbeOversize}})
	rep := r.RunOnce(t.Context())[0]
	needle := resultOf(rep, ProbeNeedle)
	var n int
	if _, err := fmt.Sscanf(needle.Evidence, "3/3 needles returned from a %d-token prompt", &n); err != nil || n > testCapacity/2 || n < testCapacity/2-100 {
		t.Errorf("needle: %q, want a prompt of just under %d bytes", needle.Evidence, testCapacity/2)
	}
	if res := resultOf(rep, ProbeOversize); res.OK || !strings.Contains(res.Evidence, "answered 200") {
		t.Errorf("oversize: %+v", res)
	}
}
