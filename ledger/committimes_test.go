package ledger

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestJournalCommitTimes: every group commit is timed, write and fsync
// together, so a slow disk shows in the histogram's upper buckets.
func TestJournalCommitTimes(t *testing.T) {
	const stall = 30 * time.Millisecond
	var slow atomic.Bool
	fault := func(string, int64) error {
		if slow.Load() {
			time.Sleep(stall)
		}
		return nil
	}
	l, err := Open(context.Background(), Config{Dir: t.TempDir(), Origin: "test.custody/log", JournalSegmentSize: 1 << 20, journalFault: fault})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })

	appendN(t, l, 3)
	cum, count, sum := l.JournalCommitTimes()
	if count != l.JournalSyncs() || count < 3 {
		t.Fatalf("%d commits timed, %d fsyncs, after 3 sequential appends", count, l.JournalSyncs())
	}
	for i := 1; i < len(cum); i++ {
		if cum[i] < cum[i-1] || cum[i] > count {
			t.Fatalf("not cumulative: %v of %d", cum, count)
		}
	}
	fast, fastSum := count, sum

	// Past the stall's bucket, one commit more than before: the slow one
	// (the earlier ones may be there too, on a disk slower than the stall).
	below := 0
	for below+1 < len(CommitBounds) && CommitBounds[below+1] <= stall {
		below++
	}
	slowBefore := count - cum[below]
	slow.Store(true)
	appendN(t, l, 1)
	slow.Store(false)
	cum, count, sum = l.JournalCommitTimes()
	if count != fast+1 {
		t.Fatalf("%d commits timed after one more append, want %d", count, fast+1)
	}
	if got := count - cum[below]; got != slowBefore+1 {
		t.Fatalf("%d commits over %s after a %s stall, want %d (buckets %v)", got, CommitBounds[below], stall, slowBefore+1, cum)
	}
	if sum-fastSum < stall {
		t.Fatalf("the slow commit added %s to the sum, want at least %s", sum-fastSum, stall)
	}
}
