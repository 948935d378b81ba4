package canary

import (
	"math/rand/v2"
	"testing"
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
