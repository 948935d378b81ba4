package sqlite

import (
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/internal/background/backgroundtest"
)

// TestPutLetsTheNetworkIn: a Put of a large batch (the queue after an
// index outage, 16,384 records at most) runs for tens of milliseconds.
// With one P, goroutines whose network wait is over (a request's bytes,
// the journal's fsync completion) must get the processor between Put's
// statements, not only when Put ends or when the runtime's monitor polls
// the network (every 10 ms): Put yields with background.Yield, which
// waits for the poller, where runtime.Gosched lets only runnable
// goroutines in. The network here is a kernel timer's that is due every
// 100 µs (backgroundtest.NetworkTurns): a waiter that the poller hands
// over at each of Put's yields runs far more often than one the monitor
// hands over every 10 ms.
func TestPutLetsTheNetworkIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// The collector's idle worker polls the network too: off, so that
	// only Put's yields can let the waiter in.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	x, err := OpenWithLog(t.Context(), fresh(t), everyLeaf{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	recs := make([]index.Record, 2048)
	for i := range recs {
		recs[i] = gatewayRecord(i)
	}
	var putErr error
	turns, took := backgroundtest.NetworkTurns(t, func() { putErr = x.Put(t.Context(), recs...) })
	if putErr != nil {
		t.Fatal(putErr)
	}
	yields := putYields(recs)
	monitor := int(took / (10 * time.Millisecond))
	t.Logf("Put of %d records took %s and yielded %d times; the network waiter ran %d times meanwhile (the monitor's polls alone: about %d)", len(recs), took, yields, turns, monitor)
	if 2*monitor >= yields {
		t.Skipf("Put's statements took %s each: on a machine this busy the monitor's polls alone come about as often as its yields", took/time.Duration(yields))
	}
	if 2*turns < yields {
		t.Fatalf("the network waiter ran %d times in the %s of Put, which yielded %d times: Put does not let the poller in between its statements", turns, took, yields)
	}
}

// putYields is how many times Put yields for recs: once a statement (as
// runs makes them, a chunk at a time) and once before its commit.
func putYields(recs []index.Record) int {
	n := 1
	count := func(lo, size int) error { n++; return nil }
	for c := range slices.Chunk(recs, putChunk) {
		terms := 0
		for i := range c {
			terms += len(index.Terms(&c[i].Transaction))
		}
		runs(len(c), count)
		runs(terms, count)
	}
	return n
}
