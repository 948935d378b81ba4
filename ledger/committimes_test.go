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
	s := l.JournalCommitTimes()
	if s.Count != l.JournalSyncs() || s.Count < 3 {
		t.Fatalf("%d commits timed, %d fsyncs, after 3 sequential appends", s.Count, l.JournalSyncs())
	}
	for i := 1; i < len(s.Cumulative); i++ {
		if s.Cumulative[i] < s.Cumulative[i-1] || s.Cumulative[i] > s.Count {
			t.Fatalf("not cumulative: %v of %d", s.Cumulative, s.Count)
		}
	}
	fast, sum := s.Count, s.Sum

	// Past the stall's bucket, one commit more than before: the slow one
	// (the earlier ones may be there too, on a disk slower than the stall).
	below := 0
	for below+1 < len(CommitBounds) && CommitBounds[below+1] <= stall {
		below++
	}
	slowBefore := s.Count - s.Cumulative[below]
	slow.Store(true)
	appendN(t, l, 1)
	slow.Store(false)
	s = l.JournalCommitTimes()
	if s.Count != fast+1 {
		t.Fatalf("%d commits timed after one more append, want %d", s.Count, fast+1)
	}
	if got := s.Count - s.Cumulative[below]; got != slowBefore+1 {
		t.Fatalf("%d commits over %s after a %s stall, want %d (buckets %v)", got, CommitBounds[below], stall, slowBefore+1, s.Cumulative)
	}
	if s.Sum-sum < stall {
		t.Fatalf("the slow commit added %s to the sum, want at least %s", s.Sum-sum, stall)
	}
}
