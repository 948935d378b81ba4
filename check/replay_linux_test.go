package check

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// TestReplayOffHeap: on Linux a replay table's claims live outside Go's
// heap (so that they do not count twice towards the process's size
// through the collector's heap goal), and still answer after the ring
// wraps around.
func TestReplayOffHeap(t *testing.T) {
	const n = 100_000
	keys := make([]string, 2*n)
	for i := range keys {
		keys[i] = fmt.Sprintf("id\\x00sim\\x00chatcmpl-%d", i)
	}
	owner := custody.NewID(time.Now())
	now := time.Now()
	var r *Replay
	grown := heapGrowth(t, 2*n, func() *Replay {
		r := NewReplay(time.Hour, n)
		for _, k := range keys[:n] {
			if err := r.Claim(k, owner, now); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}, func(built *Replay) {
		wantCode(t, built.Claim(keys[n-1], "another", now), custody.CodeResponseReplayed)
		r = built
	})
	if per := float64(grown) / n; per > 2 {
		t.Errorf("%.1f bytes of heap per claim, want none (the table is off the heap)", per)
	}
	// Past the bound the oldest claims go and the newest stay.
	for _, k := range keys[n:] {
		if err := r.Claim(k, owner, now); err != nil {
			t.Fatal(err)
		}
	}
	if r.Len() > n {
		t.Errorf("%d claims held, bound %d", r.Len(), n)
	}
	wantCode(t, r.Claim(keys[2*n-1], "another", now), custody.CodeResponseReplayed)
	if err := r.Claim(keys[0], "another", now); err != nil {
		t.Errorf("the oldest claim was kept past the bound: %v", err)
	}
	runtime.KeepAlive(r)
}
