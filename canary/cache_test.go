package canary

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/sim"
)

func TestMannWhitneyLess(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"x all below", []float64{1, 2}, []float64{3, 4}, 1.0 / 6},
		{"x all above", []float64{3, 4}, []float64{1, 2}, 1},
		{"three below three", []float64{1, 2, 3}, []float64{4, 5, 6}, 1.0 / 20},
		{"one swap", []float64{1, 2, 4}, []float64{3, 5, 6}, 2.0 / 20},
		{"all tied", []float64{7, 7}, []float64{7, 7}, 1},
		{"tie at the edge", []float64{1, 2}, []float64{2, 3}, 2.0 / 6}, // mid-ranks 1, 2.5 | 2.5, 4
		{"twelve below twelve", seq(0, 12), seq(12, 24), 1 / 2704156.0},
		{"empty", nil, []float64{1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mannWhitneyLess(tc.x, tc.y)
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("p = %v, want %v", got, tc.want)
			}
		})
	}
}

func seq(from, to int) []float64 {
	var out []float64
	for i := from; i < to; i++ {
		out = append(out, float64(i))
	}
	return out
}

func TestShuffledKeepsTheWords(t *testing.T) {
	p := cachePrefix(384)
	q := shuffled(p)
	if p == q {
		t.Fatal("shuffled returned the same order")
	}
	a, b := strings.Fields(p), strings.Fields(q)
	if len(a) != 128 || len(a) != len(b) {
		t.Fatalf("%d and %d words", len(a), len(b))
	}
	if strings.Join(a[:16], " ") == strings.Join(b[:16], " ") {
		t.Error("the first block did not change")
	}
	if len(nonceLike(p)) != 0 {
		t.Error("a prefix word looks like a nonce")
	}
}

// cacheRoute is a simulator with a prefill time that makes a cache hit
// visible, behind a target that salts each tenant's requests as custody
// does.
func cacheRoute(t *testing.T) *simTarget {
	t.Helper()
	return timedTarget(t, sim.Config{Capacity: testCapacity, PrefillDelay: cachePrefillDelay()})
}

// timedTarget is a simulator with cfg behind a target, both on a model
// clock (clock_test.go), or on the wall clock for the measurement
// (CUSTODY_MEASURE=1).
func timedTarget(t *testing.T, cfg sim.Config) *simTarget {
	t.Helper()
	if os.Getenv("CUSTODY_MEASURE") != "" {
		return newTarget(t, newSim(t, cfg), cfg.Capacity)
	}
	clock := newModelClock(t.Name())
	cfg.Sleep = clock.sleep
	tg := newTarget(t, newSim(t, cfg), cfg.Capacity)
	tg.clock = clock
	return tg
}

// cachePrefillDelay is the simulator's prefill time per uncached token,
// as in the measurement (docs/canaries.md).
func cachePrefillDelay() time.Duration { return 20 * time.Microsecond }

func runCache(t *testing.T, r *Runner) ProbeResult {
	t.Helper()
	return resultOf(r.RunOnce(t.Context())[0], ProbeCache)
}

func TestCacheProbe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fault    sim.Fault
		noSalt   bool // the gateway injects no salt
		noDelay  bool // the simulator's time to first token shows no hit
		want     Status
		code     string
		evidence string
	}{
		{name: "honest", want: StatusOK, evidence: "16 pairs isolated"},
		{name: "honest, hits shown only by cached_tokens", noDelay: true, want: StatusOK},
		{name: "shared-cache", fault: sim.FaultSharedCache, want: StatusFailed, code: "cache_shared", evidence: "reported cached"},
		{name: "shared-cache, cached_tokens only", fault: sim.FaultSharedCache, noDelay: true, want: StatusFailed, code: "cache_shared"},
		{name: "shared-cache-timing", fault: sim.FaultSharedCacheTiming, want: StatusFailed, code: "cache_shared", evidence: "timing"},
		{name: "no salt injected", noSalt: true, want: StatusFailed, code: "cache_shared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.Config{Capacity: testCapacity, PrefillDelay: 20 * time.Microsecond}
			if tc.noDelay {
				cfg.PrefillDelay = 0
			}
			tg := timedTarget(t, cfg)
			tg.noSalt = tc.noSalt
			if tc.fault != "" {
				tg.setFault(string(tc.fault))
			}
			// One run on an honest route is a draw from the test's null
			// distribution (a false alarm at alpha 0.001 in one run of a
			// thousand); its coins are seeded, as the model clock's noise
			// is, so each case is the same run every time. The false-alarm
			// rate over many unseeded runs is TestCacheProbeFalseAlarmAndDetection's.
			r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeCache}, Seed: seedOf(t.Name())})
			res := runCache(t, r)
			if res.Outcome() != tc.want || res.Code != tc.code || !strings.Contains(res.Evidence, tc.evidence) {
				t.Errorf("%s, code %q: %s; want %s, code %q, evidence with %q", res.Outcome(), res.Code, res.Evidence, tc.want, tc.code, tc.evidence)
			}
		})
	}
}

// TestCacheProbeBlindIsInconclusive: a route whose cache serves nothing
// (cache_prompt: false on every request, as cache_isolation: disable
// sends) cannot show sharing either.
func TestCacheProbeBlindIsInconclusive(t *testing.T) {
	tg := cacheRoute(t)
	tg.noCache = true
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeCache}})
	res := runCache(t, r)
	if res.Outcome() != StatusInconclusive || !strings.Contains(res.Evidence, "no cache hit for the same tenant") {
		t.Errorf("%s: %s; want inconclusive", res.Outcome(), res.Evidence)
	}
}

func TestCacheProbeSkippedBelowItsPrompt(t *testing.T) {
	tg := newTarget(t, newSim(t, sim.Config{Capacity: 256}), 256)
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeCache}})
	if w := r.Plan(); len(w) != 1 || w[0].Probe != ProbeCache {
		t.Errorf("plan = %v, want the cache probe skipped", w)
	}
	if res := runCache(t, r); res.Outcome() != StatusSkipped {
		t.Errorf("%s: %s", res.Outcome(), res.Evidence)
	}
}

// TestCacheProbeFalseAlarmAndDetection runs the probe many times, each
// run with fresh prefixes: on the honest simulator (the false-alarm rate,
// in docs/canaries.md) and under both faults, each of which must be
// caught in every run. CUSTODY_MEASURE=1 runs 200 of each (about five
// minutes); CI runs 20.
func TestCacheProbeFalseAlarmAndDetection(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement: thousands of requests")
	}
	runs := 20
	if os.Getenv("CUSTODY_MEASURE") != "" {
		runs = 200
	}
	for _, tc := range []struct {
		fault sim.Fault
		runs  int
	}{
		{"", runs},
		{sim.FaultSharedCache, runs},
		{sim.FaultSharedCacheTiming, runs},
	} {
		name := string(tc.fault)
		if name == "" {
			name = "honest"
		}
		t.Run(name, func(t *testing.T) {
			tg := cacheRoute(t)
			if tc.fault != "" {
				tg.setFault(string(tc.fault))
			}
			r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeCache}})
			counts := map[Status]int{}
			var ps []float64 // the cross timing test's p-values, where it ran
			for range tc.runs {
				res := runCache(t, r)
				counts[res.Outcome()]++
				if tc.fault == "" && res.Outcome() != StatusOK {
					t.Logf("false alarm: %s: %s", res.Outcome(), res.Evidence)
				}
				if tc.fault != "" && (res.Outcome() != StatusFailed || res.Code != "cache_shared") {
					t.Errorf("missed: %s: %s", res.Outcome(), res.Evidence)
				}
				if i := strings.LastIndex(res.Evidence, "p="); i >= 0 {
					var p float64
					if _, err := fmt.Sscan(strings.TrimRight(strings.Fields(res.Evidence[i+2:])[0], ","), &p); err == nil {
						ps = append(ps, p)
					}
				}
			}
			below := func(a float64) int {
				n := 0
				for _, p := range ps {
					if p <= a {
						n++
					}
				}
				return n
			}
			t.Logf("%s: %d runs: %v; timing p <= .001/.01/.05/.10 in %d/%d/%d/%d of %d, largest p %.3g",
				name, tc.runs, counts, below(.001), below(.01), below(.05), below(.1), len(ps), slices.Max(append(ps, 0)))
			// At alpha 0.001 the false alarms of 200 runs are
			// Binomial(200, <= 0.001): more than 2 has probability < 0.002.
			if tc.fault == "" && counts[StatusOK] < tc.runs-2 {
				t.Errorf("%d false alarms or inconclusive runs in %d", tc.runs-counts[StatusOK], tc.runs)
			}
			// On an honest route the p-values are about uniform: a
			// median outside (0.1, 0.9) (probability < 1e-5 for 20
			// runs) means the times were tied or ordered, and the
			// false-alarm count above measured nothing.
			if tc.fault == "" && len(ps) == tc.runs {
				if m := medianOf(ps); m <= 0.1 || m >= 0.9 {
					t.Errorf("honest timing p-values have median %.3g, want them about uniform", m)
				}
			}
		})
	}
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestResultCachedTokens(t *testing.T) {
	cached, err := os.ReadFile("testdata/answer-cached.json")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadFile("testdata/answer-plain.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body []byte
		n    int
		ok   bool
	}{
		{"reported", cached, 369, true},
		{"not reported", plain, 0, false},
		{"reported zero", []byte(`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":0}}}`), 0, true},
		{"null details", []byte(`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":9,"prompt_tokens_details":null}}`), 0, false},
		{"negative", []byte(`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens_details":{"cached_tokens":-5}}}`), 0, true},
		{"not an answer", []byte(`{"error":{"code":"x"}}`), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, ok := Result{Body: tc.body}.CachedTokens()
			if n != tc.n || ok != tc.ok {
				t.Errorf("CachedTokens() = %d, %v; want %d, %v", n, ok, tc.n, tc.ok)
			}
		})
	}
}

// TestCacheSharedIsNotRouteHealth: a failing cache probe marks the route
// CacheShared (for policies with on_cache_shared: quarantine) but does
// not turn its health red for everyone; a passing one clears it.
func TestCacheSharedIsNotRouteHealth(t *testing.T) {
	tg := timedTarget(t, sim.Config{Capacity: testCapacity, PrefillDelay: 20 * time.Microsecond})
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeCache}, FailRuns: 1, PassRuns: 1, Seed: seedOf(t.Name())})
	tg.setFault(string(sim.FaultSharedCache))
	rep := r.RunOnce(t.Context())[0]
	if rep.OK() || rep.Health == Red || r.Quarantined("sim-1", 0) || !r.CacheShared("sim-1", 0) {
		t.Errorf("shared cache: ok %v, health %s, quarantined %v, cache shared %v", rep.OK(), rep.Health, r.Quarantined("sim-1", 0), r.CacheShared("sim-1", 0))
	}
	tg.setFault("")
	r.RunOnce(t.Context())
	if r.CacheShared("sim-1", 0) {
		t.Error("an honest run did not clear CacheShared")
	}
}
