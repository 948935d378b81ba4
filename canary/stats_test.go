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
		if got := distance(a, tc.b, 0.05); got < tc.want-1e-9 || got > tc.want+1e-9 {
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
