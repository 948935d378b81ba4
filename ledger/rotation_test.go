package ledger

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSegmentsRotateFasterThanTheyFill: when segments fill faster than
// the next one is zero-filled in the background, rotation fills its own
// segment and no second preparer starts: two would zero the same
// next.prepared file, one of them after it became a segment (zeroing
// acknowledged records), and the one left with nowhere to hand its file
// kept Close waiting for ever.
func TestSegmentsRotateFasterThanTheyFill(t *testing.T) {
	if testing.Short() {
		t.Skip("fills segments for a few seconds")
	}
	var slow, preparers, most atomic.Int32
	fault := func(p string, off int64) error {
		if strings.HasSuffix(p, preparedName) && off == 0 {
			n := preparers.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			defer preparers.Add(-1)
			slow.Add(1)
			time.Sleep(300 * time.Millisecond) // a slow disk: rotations come first
		}
		return nil
	}
	dir := t.TempDir()
	l, err := Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond,
		JournalSegmentSize: 256 << 10, journalFault: fault})
	if err != nil {
		t.Fatal(err)
	}
	// Each writer appends at least each leaves, and goes on until a second
	// segment has been prepared (or for 20 s): on a fast machine 8,000
	// appends finish while the first, slow preparation still sleeps, and
	// nothing would rotate after it.
	const writers, each = 16, 500
	var wg sync.WaitGroup
	var appended atomic.Int64
	deadline := time.Now().Add(20 * time.Second)
	for w := range writers {
		wg.Go(func() {
			for i := 0; i < each || (slow.Load() < 2 && time.Now().Before(deadline)); i++ {
				if _, err := l.AppendIndex(context.Background(), sampleTx(l, fmt.Sprintf("r-%d-%d", w, i), nil, nil)); err != nil {
					t.Errorf("append: %v", err)
					return
				}
				appended.Add(1)
			}
		})
	}
	wg.Wait()
	closed := make(chan error, 1)
	go func() { closed <- l.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close still waiting after 30 s")
	}
	if m := most.Load(); m > 1 {
		t.Errorf("%d preparers filled %s at once", m, preparedName)
	}
	if slow.Load() < 2 {
		t.Fatalf("only %d segments were prepared: the test did not rotate segments", slow.Load())
	}
	l2, err := Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 256 << 10})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l2.Close(context.Background())
	if n := l2.Size(); n != uint64(appended.Load()) {
		t.Errorf("the log holds %d leaves, want %d", n, appended.Load())
	}
}
