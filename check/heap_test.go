package check

import (
	"runtime"
	"testing"
)

// heapGrowth returns how many bytes of live heap build's result holds,
// measured so that it holds on a busy machine: the heap is settled before
// each reading (two collections, so that sync.Pool's victim caches of
// earlier tests are gone too), the difference is signed (the rest of the
// heap may shrink between the readings; an unsigned difference wraps), and
// a reading above limit is taken again, up to three times, keeping the
// smallest, since other goroutines' garbage only ever adds to a reading.
// build's result is kept alive until the second reading; check is called
// on it afterwards, so that it is not dead sooner.
func heapGrowth[T any](t *testing.T, limit int64, build func() T, check func(T)) int64 {
	t.Helper()
	var best int64
	for try := 0; try < 3; try++ {
		before := settledHeap()
		v := build()
		grown := settledHeap() - before
		check(v)
		runtime.KeepAlive(v)
		if try == 0 || grown < best {
			best = grown
		}
		if best <= limit {
			break
		}
	}
	return best
}

// settledHeap is the live heap after two full collections.
func settledHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
