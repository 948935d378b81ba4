package check

import (
	"math/rand/v2"
	"testing"
)

// TestClaimTableAgainstMap: through random adds and evictions, with keys
// chosen to share home slots (long probe runs, wrap-around at the end of
// the index), the table finds exactly what a map of the last max claims
// holds.
func TestClaimTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, max := range []int{1, 2, 7, 37, 200} {
		tab := newClaimTable(max)
		var order []uint64 // the keys held, oldest first
		held := map[uint64]int64{}
		for step := range 20 * max {
			// Keys from a small space whose low bits collide often.
			key := uint64(rng.IntN(4*max))<<3 | uint64(rng.IntN(2))*(tab.mask&^7)
			if _, ok := held[key]; ok {
				continue
			}
			tab.add(claimEntry{key: key, meta: uint64(step)})
			held[key] = int64(step)
			order = append(order, key)
			if len(order) > max {
				delete(held, order[0])
				order = order[1:]
			}
			if tab.len() != len(held) {
				t.Fatalf("max %d step %d: %d claims held, want %d", max, step, tab.len(), len(held))
			}
			for k, at := range held {
				if e := tab.find(k); e == nil || e.meta != uint64(at) {
					t.Fatalf("max %d step %d: key %d lost (%v)", max, step, k, e)
				}
			}
			for _, k := range []uint64{order[0] ^ 1<<40, key + 1<<41} {
				if _, ok := held[k]; !ok && tab.find(k) != nil {
					t.Fatalf("max %d step %d: found key %d never added", max, step, k)
				}
			}
		}
	}
}
