package ledger

import (
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestZeroFileYields: the next journal segment is zero-filled in the
// background while requests run. With one P (GOMAXPROCS=1, any 1-CPU
// container) a fill written back to back held the P for the whole of
// its writes (32 MiB, 10-15 ms, then a blocking fsync until the
// runtime's monitor took the P back), and every request that became
// runnable meanwhile waited: a stall once per segment. The fill yields
// between its pieces, so a goroutine runnable meanwhile runs between
// any two of them. The fault hook runs before each piece: a probe
// goroutine that counts while it gets the P must have counted between
// one piece and the next.
func TestZeroFileYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ran atomic.Int64
	var pieces, starved int
	last := int64(-1)
	j := &journal{dir: t.TempDir(), segMax: 8 << 20, fault: func(_ string, off int64) error {
		if n := ran.Load(); off > 0 {
			pieces++
			if n == last {
				starved++
			}
			last = n
		} else {
			last = n
		}
		return nil
	}}
	var done atomic.Bool
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for !done.Load() {
			ran.Add(1)
			runtime.Gosched()
		}
	}()
	runtime.Gosched() // the probe is running
	ds := newDataSyncer()
	defer ds.close()
	f, err := j.zeroFile(filepath.Join(j.dir, preparedName), ds)
	done.Store(true)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Logf("%d pieces after the first; the probe did not run before %d of them", pieces, starved)
	if pieces == 0 || starved > pieces/10 {
		t.Fatalf("the probe goroutine did not run between %d of %d pieces of the fill: zeroFile holds the P", starved, pieces)
	}
}
