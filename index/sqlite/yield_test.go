package sqlite

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody/index"
)

// TestPutYields: the index is written in the background, and with one P
// (GOMAXPROCS=1, any 1-CPU container) a batch that never yields holds it
// for its whole run of statements: every request that became runnable
// meanwhile waits behind it (the longest stalls of serve at 1,000 req/s,
// by execution trace, were the recorder's Puts). Put yields between its
// statements, so another goroutine waits for one statement at most.
func TestPutYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	x, err := OpenWithLog(t.Context(), fresh(t), everyLeaf{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	// 240 records: statements of 64, 64, 64, 16, 16 and 16 rows, and as
	// many of their terms; the longest is about a seventh of the whole.
	const batch = 240
	n, best := 0, 1.0
	for trial := 0; trial < 5 && best >= 0.5; trial++ {
		recs := make([]index.Record, batch)
		for i := range recs {
			recs[i] = gatewayRecord(n)
			n++
		}
		var done atomic.Bool
		gaps := make(chan time.Duration, 1)
		go func() {
			var longest time.Duration
			for !done.Load() {
				t0 := time.Now()
				runtime.Gosched()
				longest = max(longest, time.Since(t0))
			}
			gaps <- longest
		}()
		runtime.Gosched() // the probe is running
		began := time.Now()
		if err := x.Put(t.Context(), recs...); err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		done.Store(true)
		longest := <-gaps
		best = min(best, longest.Seconds()/took.Seconds())
		t.Logf("trial %d: Put of %d records took %s; the longest another goroutine waited: %s", trial, batch, took, longest)
	}
	if best >= 0.5 {
		t.Fatalf("while Put ran, another goroutine waited for at least %.0f %% of it in one stretch: Put does not yield between statements", 100*best)
	}
}
