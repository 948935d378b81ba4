package canary

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/custody-gateway/custody/sim"
)

func testRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func TestDistance(t *testing.T) {
	a := Sample{T: []uint64{1, 2, 3, 4}, L: []float64{-0.1, -0.2, -0.3, -0.4}}
	for _, tc := range []struct {
		name string
		b    Sample
		want float64
	}{
		{"same", a, 0},
		{"one token differs", Sample{T: []uint64{1, 2, 9, 4}, L: a.L}, 0.25},
		{"shorter", Sample{T: []uint64{1, 2}, L: []float64{-0.1, -0.2}}, 0.5},
		{"logprobs shifted by scale", Sample{T: a.T, L: []float64{-0.15, -0.25, -0.35, -0.45}}, 1},
		{"no logprobs", Sample{T: a.T}, 0},
		{"empty", Sample{}, 1},
	} {
		if got := distance(a, tc.b, 0.05, 0); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("%s: distance = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPermutationTest(t *testing.T) {
	same := func(v uint64) []Sample {
		return []Sample{{T: []uint64{v}}, {T: []uint64{v}}, {T: []uint64{v}}, {T: []uint64{v}}}
	}
	for _, tc := range []struct {
		name    string
		x, y    [][]Sample
		reject  bool
		minP    float64
		maxStat float64
	}{
		{name: "identical", x: [][]Sample{same(1), same(2)}, y: [][]Sample{same(1), same(2)}, minP: 1},
		{name: "all differ", x: [][]Sample{same(1), same(2), same(3)}, y: [][]Sample{same(4), same(5), same(6)}, reject: true},
	} {
		_, p := identityTest(tc.x, tc.y, IdentityConfig{Permutations: 999, LogprobScale: 0.05}, testRand())
		if (p <= 0.01) != tc.reject || p < tc.minP {
			t.Errorf("%s: p = %v", tc.name, p)
		}
	}
}

// BenchmarkIdentityTest: one run's test at the default settings (5 prompts,
// 6 reference and 4 fresh samples of 24 tokens with top-5 logprobs, 9,999
// permutations).
func BenchmarkIdentityTest(b *testing.B) {
	rng := testRand()
	mk := func() Sample {
		s := Sample{T: make([]uint64, 24), L: make([]float64, 24), K: make([][]Alt, 24)}
		for i := range s.T {
			s.T[i], s.L[i] = rng.Uint64N(3), -rng.Float64()
			for range 5 {
				s.K[i] = append(s.K[i], Alt{T: rng.Uint64N(8), L: -rng.Float64()})
			}
		}
		return s
	}
	var ref, cur [][]Sample
	for range 5 {
		var r, c []Sample
		for range 6 {
			r = append(r, mk())
		}
		for range 4 {
			c = append(c, mk())
		}
		ref, cur = append(ref, r), append(cur, c)
	}
	cfg := IdentityConfig{}.withDefaults()
	b.ResetTimer()
	for b.Loop() {
		identityTest(ref, cur, cfg, rng)
	}
}

// TestNoiseFloor: logprob differences of serving noise (1e-4..1e-3) between
// an idle enrollment and samples taken under load are no evidence, while a
// close variant's (0.02) still are; a prompt whose enrollment samples
// themselves differ gets their 90th percentile as its floor, capped.
func TestNoiseFloor(t *testing.T) {
	rng := testRand()
	base := Sample{T: make([]uint64, 24), L: make([]float64, 24), K: make([][]Alt, 24)}
	for i := range base.T {
		base.T[i], base.L[i] = rng.Uint64(), -rng.Float64()
		base.K[i] = []Alt{{T: base.T[i], L: base.L[i]}, {T: rng.Uint64(), L: -3 - rng.Float64()}}
	}
	shift := func(sd, by float64) Sample {
		s := Sample{T: base.T, L: make([]float64, len(base.L)), K: make([][]Alt, len(base.K))}
		for i := range s.L {
			s.L[i] = base.L[i] + by + rng.NormFloat64()*sd
			for _, a := range base.K[i] {
				s.K[i] = append(s.K[i], Alt{T: a.T, L: a.L + by + rng.NormFloat64()*sd})
			}
		}
		return s
	}
	set := func(n int, sd, by float64) [][]Sample {
		out := make([][]Sample, 5)
		for p := range out {
			for range n {
				out[p] = append(out[p], shift(sd, by))
			}
		}
		return out
	}
	idle := set(6, 0, 0)
	for _, tc := range []struct {
		name   string
		floor  float64
		ref    [][]Sample
		cur    [][]Sample
		reject bool
	}{
		{"batch noise, no floor: the false alarm", -1, idle, set(4, 3e-4, 0), true},
		{"batch noise under the default floor", 0, idle, set(4, 3e-4, 0), false},
		{"noisier than the floor, noisy enrollment", 0, set(6, 2e-3, 0), set(4, 2e-3, 0), false},
		{"variant through the floor", 0, idle, set(4, 3e-4, 0.02), true},
		{"variant through a noisy enrollment's floor", 0, set(6, 1e-3, 0), set(4, 1e-3, 0.02), true},
	} {
		cfg := IdentityConfig{NoiseFloor: tc.floor, Permutations: 999}.withDefaults()
		_, p := identityTest(tc.ref, tc.cur, cfg, rng)
		if (p <= 0.01) != tc.reject {
			t.Errorf("%s: p = %v", tc.name, p)
		}
	}
	if f := noiseFloors(idle, 1e-3); f[0] != 1e-3 {
		t.Errorf("identical enrollment: floor %v, want the minimum", f[0])
	}
	noisy := [][]Sample{{shift(0, 0), shift(0, 0.002)}, {shift(0, 0), shift(0, 0.5)}}
	if f := noiseFloors(noisy, 1e-3); math.Abs(f[0]-0.002) > 1e-9 || f[1] != noiseFloorCap {
		t.Errorf("enrollments differing by 0.002 and 0.5: floors %v, want 0.002 and the cap", f)
	}
}

// TestEnrollmentUnderLoad: the enrollment takes half its samples several
// at a time, so that the reference holds a loaded upstream's batch states.
func TestEnrollmentUnderLoad(t *testing.T) {
	tg := newServingNoise(newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity), 3)
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeIdentity}})
	e, f := r.enroll(t.Context(), tg)
	if f != nil {
		t.Fatal(f.Evidence)
	}
	if tg.most.Load() < 2 {
		t.Errorf("at most %d enrollment requests in flight", tg.most.Load())
	}
	for p, ss := range e.Samples {
		if len(ss) != r.cfg.Identity.EnrollSamples {
			t.Errorf("prompt %d: %d samples", p, len(ss))
		}
	}
	if f := noiseFloors(e.Samples, 0); f[0] == 0 {
		t.Error("the enrollment saw no noise: none of it was under load")
	}
}
