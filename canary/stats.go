package canary

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The identity test. Samples of one prompt are compared with a distance d
// (distance): the fraction of token positions that differ, plus, where the
// tokens agree and logprobs are given, the mean logprob difference, less
// the prompt's noise floor, scaled by LogprobScale and capped at 1.
//
// The noise floor: a serving stack's logprobs move by 1e-4 to 1e-3 with
// its batch and cache state (other requests in the batch change the kernel
// reductions), so a difference that small says nothing about the model. It
// is subtracted from every logprob difference (differences under it count
// as equal). Each prompt's floor is the larger of NoiseFloor and the 90th
// percentile of the differences among its enrollment samples, which are
// taken partly under concurrent load for that reason, capped at 5e-3
// (noiseFloors). The statistic is the energy distance
// between the reference X and the fresh sample Y,
//
//	E = mean d(X,Y) - (mean d(X,X') + mean d(Y,Y')) / 2,
//
// summed over prompts. Its null distribution comes from a stratified
// permutation test: labels are shuffled within each prompt, so the test is
// exact (false-alarm rate <= alpha) whenever the route's answers are
// exchangeable between enrollment and now, whatever the serving noise.

// distance compares two samples of the same prompt.
func distance(a, b Sample, scale, floor float64) float64 {
	n := max(len(a.T), len(b.T))
	if n == 0 {
		return 0
	}
	common := min(len(a.T), len(b.T))
	mism := n - common
	var lp float64
	lpN := 0
	for i := range common {
		if a.T[i] != b.T[i] {
			mism++
			continue
		}
		if len(a.L) <= i || len(b.L) <= i {
			continue
		}
		d, k := above(a.L[i], b.L[i], floor), 1
		if len(a.K) > i && len(b.K) > i {
			for _, x := range a.K[i] {
				for _, y := range b.K[i] {
					if x.T == y.T {
						d += above(x.L, y.L, floor)
						k++
						break
					}
				}
			}
		}
		lp += min(d/float64(k)/scale, 1)
		lpN++
	}
	v := float64(mism) / float64(n)
	if lpN > 0 {
		v += lp / float64(lpN)
	}
	return v
}

// above is how far two logprobs differ beyond the noise floor.
func above(x, y, floor float64) float64 { return max(math.Abs(x-y)-floor, 0) }

// noiseFloors returns each prompt's noise floor from its reference
// samples: the 90th percentile of the logprob differences between two of
// them where they hold the same token (the logprob and every shared
// alternative), at least min and at most noiseFloorCap. The enrollment
// takes half its samples under concurrent load, so the percentile is the
// size of the route's batch noise; the floor then absorbs the part of it
// that fresh samples under a different load do not share with the
// reference. Noise above the cap is as large as the differences between
// close models (the simulator's variant moves logprobs by up to 0.02):
// a floor that high would blind the test, and the permutation test already
// allows for noise the reference shows.
func noiseFloors(ref [][]Sample, min float64) []float64 {
	out := make([]float64, len(ref))
	var diffs []float64
	for p, ss := range ref {
		diffs = diffs[:0]
		for i := range ss {
			for j := range i {
				diffs = logprobDiffs(diffs, ss[i], ss[j])
			}
		}
		var q float64
		if len(diffs) > 0 {
			slices.Sort(diffs)
			q = diffs[len(diffs)*9/10]
		}
		out[p] = max(min, math.Min(q, noiseFloorCap))
	}
	return out
}

// noiseFloorCap bounds a prompt's noise floor (see noiseFloors).
const noiseFloorCap = 5e-3

// logprobDiffs appends the logprob differences of a and b where they hold
// the same token, up to their first divergence (after it the contexts
// differ).
func logprobDiffs(dst []float64, a, b Sample) []float64 {
	for i := range min(len(a.T), len(b.T), len(a.L), len(b.L)) {
		if a.T[i] != b.T[i] {
			break
		}
		dst = append(dst, math.Abs(a.L[i]-b.L[i]))
		if len(a.K) > i && len(b.K) > i {
			for _, x := range a.K[i] {
				for _, y := range b.K[i] {
					if x.T == y.T {
						dst = append(dst, math.Abs(x.L-y.L))
					}
				}
			}
		}
	}
	return dst
}

// stratum is one prompt's pooled samples: the first nx are the reference.
type stratum struct {
	d     [][]float64 // pairwise distances
	nx    int
	total float64 // the sum of d over all pairs, whatever their labels
}

func newStratum(x, y []Sample, scale, floor float64) stratum {
	all := append(append([]Sample(nil), x...), y...)
	d := make([][]float64, len(all))
	var total float64
	for i := range all {
		d[i] = make([]float64, len(all))
		for j := range i {
			d[i][j] = distance(all[i], all[j], scale, floor)
			d[j][i] = d[i][j]
			total += d[i][j]
		}
	}
	return stratum{d: d, nx: len(x), total: total}
}

// energy is the stratum's statistic with the labelling perm (the first nx
// indices of perm are X). The pairs across the labels are what the
// pairs within them leave of the total, so only those within are summed:
// half the pairs of a balanced stratum.
func (s stratum) energy(perm []int) float64 {
	nx, n := s.nx, len(perm)
	ny := n - nx
	xx, yy := s.within(perm[:nx]), s.within(perm[nx:])
	e := (s.total - xx - yy) / float64(nx*ny)
	if nx > 1 {
		e -= xx / float64(nx*(nx-1)/2) / 2
	}
	if ny > 1 {
		e -= yy / float64(ny*(ny-1)/2) / 2
	}
	return e
}

// within is the sum of the distances between the samples of idx.
func (s stratum) within(idx []int) float64 {
	var sum float64
	for a, i := range idx {
		row := s.d[i]
		for _, j := range idx[a+1:] {
			sum += row[j]
		}
	}
	return sum
}

// permutationTest returns the statistic and its p-value,
// (1 + #{permutations with E >= observed}) / (1 + B).
func permutationTest(strata []stratum, b int, rng *rand.Rand) (stat, p float64) {
	perms := make([][]int, len(strata))
	for i, s := range strata {
		perms[i] = make([]int, len(s.d))
		for j := range perms[i] {
			perms[i][j] = j
		}
		stat += s.energy(perms[i])
	}
	tol := 1e-9 * (1 + math.Abs(stat))
	ge := 0
	for range b {
		var t float64
		for i, s := range strata {
			rng.Shuffle(len(perms[i]), func(a, c int) { perms[i][a], perms[i][c] = perms[i][c], perms[i][a] })
			t += s.energy(perms[i])
		}
		if t >= stat-tol {
			ge++
		}
	}
	return stat, float64(1+ge) / float64(1+b)
}
