package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// metric reads one of the runtime's unsigned metrics.
func metric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// cycles is the number of collections the runtime has finished.
func cycles() uint64 { return metric("/gc/cycles/total:gc-cycles") }

// sink keeps allocations from being optimised away.
var sink []byte

// churn allocates n bytes of garbage in 32 KiB pieces.
func churn(n int) {
	for i := 0; i < n>>15; i++ {
		sink = make([]byte, 32<<10)
	}
	sink = nil
}

// settle collects until the pacer has seen a collection: its callback
// runs on the cleanup goroutine a moment after the collection ends.
func settle(t *testing.T, p *Pacer, want func(int64) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !want(p.Limit()); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the limit stayed at %d MiB", p.Limit()>>20)
		}
		runtime.GC()
	}
}

// heapGoal is the heap size at which the runtime plans the next
// collection.
func heapGoal() uint64 { return metric("/gc/heap/goal:bytes") }

// TestFloorHoldsTheCollectorOff: under the floor the collector plans its
// next run at the floor, and 64 MiB of garbage does not reach it, where
// GOGC=100 plans it a few MiB over a small heap. The goal, not a count
// of collections, tells the two apart: on a busy machine a mark phase
// that waits for a CPU lets allocation run past it, and 64 MiB of garbage
// under GOGC=100 took as few as one collection (27 runs of 200 beside
// three busy loops took three or fewer).
func TestFloorHoldsTheCollectorOff(t *testing.T) {
	runtime.GC()
	unpaced := heapGoal()
	if unpaced >= 64<<20 {
		t.Fatalf("under GOGC=100 the heap goal is %d MiB; the test needs it under the 64 MiB of garbage it makes", unpaced>>20)
	}

	p := Start(256<<20, 100)
	defer p.Stop()
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Fatalf("memory limit %d MiB, want the floor, 256", got>>20)
	}
	runtime.GC()
	if goal := heapGoal(); goal < 192<<20 {
		t.Errorf("under a 256 MiB floor the heap goal is %d MiB (%d without it), want most of the floor", goal>>20, unpaced>>20)
	}
	before := cycles()
	churn(64 << 20)
	if paced := cycles() - before; paced > 1 {
		t.Errorf("64 MiB of garbage under a 256 MiB floor took %d collections", paced)
	}
}

// TestLimitFollowsTheLiveHeap: with a live heap over the floor, the limit
// rises to the live heap and its percentage after the next collection,
// so the collector runs as GOGC would, not back to back; and Stop gives
// the runtime its settings back.
func TestLimitFollowsTheLiveHeap(t *testing.T) {
	prevPercent, prevLimit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(prevPercent)

	p := Start(16<<20, 100)
	live := make([]byte, 96<<20)
	for i := range live {
		live[i] = 1 // touched: resident and counted
	}
	settle(t, p, func(l int64) bool { return l >= 2*96<<20 })

	before := cycles()
	churn(128 << 20)
	if n := cycles() - before; n > 4 {
		t.Errorf("128 MiB of garbage over a 96 MiB live heap took %d collections: the collector ran back to back under the limit", n)
	}
	runtime.KeepAlive(live)

	live = nil
	settle(t, p, func(l int64) bool { return l < 96<<20 })
	if l := p.Limit(); l < 16<<20 {
		t.Errorf("limit %d MiB, under the 16 MiB floor", l>>20)
	}

	p.Stop()
	if got := debug.SetGCPercent(prevPercent); got != prevPercent {
		t.Errorf("GOGC after Stop: %d, want %d", got, prevPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != prevLimit {
		t.Errorf("memory limit after Stop: %d, want %d", got, prevLimit)
	}
}
