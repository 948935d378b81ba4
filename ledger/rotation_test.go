package ledger

import (
	"context"
	"fmt"
	"path/filepath"
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

// TestSegmentsAreRecycled: once tessera holds a segment's records, the
// file is the next segment, renamed, instead of a new one zero-filled. A
// fill writes a whole segment and syncs it, and every commit meanwhile
// waits behind it at the disk (a 32 MiB fill took the commits' p99 from
// 9 to 40 ms here), so a ledger whose tessera keeps up fills only the two
// segments Open readies, however many it rotates through. The recycled
// files still hold their earlier records past the new ones: reading the
// journal back, at Close or after a crash, finds every record and no
// damage.
func TestSegmentsAreRecycled(t *testing.T) {
	dir := t.TempDir()
	const seg = 64 << 10
	cfg := Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: seg}
	l, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close(context.Background()) }()
	// About 1.5 KB a leaf: 40 a segment. Each batch waits until tessera
	// holds it, so that a segment has always come free by the rotation.
	appended := 0
	for batch := range 24 {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				if _, err := l.AppendIndex(context.Background(), sampleTx(l, fmt.Sprintf("r-%d-%d", batch, i), nil, nil)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		appended += 20
		for l.Size() < uint64(appended) {
			time.Sleep(time.Millisecond)
		}
	}
	if fills := l.j.fills.Load(); fills != 2 {
		t.Errorf("%d zero fills for %d leaves in %d KiB segments, want 2 (Open's): integrated segments were not recycled", fills, appended, seg>>10)
	}
	// A crash now: the journal as the disk holds it reads back whole.
	recs, _, d, err := scanJournal(filepath.Join(dir, journalDir))
	if err != nil || d != nil {
		t.Fatalf("the journal of recycled segments reads back damaged: %v %+v", err, d)
	}
	if last := recs[len(recs)-1].index; last != uint64(appended-1) || int(recs[0].index)+len(recs) != appended {
		t.Fatalf("the journal holds records %d to %d, want its last %d", recs[0].index, last, appended-1)
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cur := l.j.segments[len(l.j.segments)-1]; cur < uint64(appended)/2 {
		t.Fatalf("the last segment starts at %d of %d leaves: too few rotations to test", cur, appended)
	}
	rep, err := CheckJournal(dir)
	if err != nil || rep.Damage != nil {
		t.Fatalf("after Close: %v %+v", err, rep)
	}
	if l, err = Open(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if l.Size() != uint64(appended) {
		t.Errorf("reopened with %d leaves, want %d", l.Size(), appended)
	}
	if fills := l.j.fills.Load(); fills != 0 {
		t.Errorf("reopening filled %d segments: the integrated ones were there to recycle", fills)
	}
}
