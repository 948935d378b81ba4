package ledger

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestRoundsWaitInTheFeederNotInTessera: with a long batch_max_age, a
// leaf that finds the feeder idle reaches the log within tessera's short
// round flush, not a whole batch_max_age later (tessera starts its clock
// at a batch's first entry and, before, held every round that long while
// the next one piled up behind it: twice the leaves in memory); and the
// next round still waits out the rest of batch_max_age after it, so the
// rounds come no more often than before and tessera's cost per request
// is unchanged. Both bounds are half of batch_max_age (5 s), against
// tens of milliseconds when either half of the design is missing.
func TestRoundsWaitInTheFeederNotInTessera(t *testing.T) {
	const age = 5 * time.Second
	l, err := Open(context.Background(), Config{Dir: t.TempDir(), BatchMaxAge: age, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	in := func(i int) time.Time {
		t.Helper()
		idx, err := l.AppendIndex(context.Background(), sampleTx(l, fmt.Sprintf("round-%d", i), []byte("q"), []byte("a")))
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); l.integrated.Load() <= idx; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("leaf %d not in the log a minute after it was durable", idx)
			}
		}
		return time.Now()
	}
	start := time.Now()
	first := in(0)
	if d := first.Sub(start); d >= age/2 {
		t.Errorf("the first leaf reached the log %s after it was durable: tessera held it for batch_max_age (%s)", d, age)
	}
	second := in(1)
	// The pause is age-roundFlush from the feeder's own clock, which
	// starts when it sees the round resolved; half the age leaves room
	// for the feeder being scheduled late on a busy machine, and a
	// feeder that does not pause takes the next round in milliseconds.
	if d := second.Sub(first); d < age/2 {
		t.Errorf("the next round was taken %s after the last, within half of batch_max_age (%s): rounds come more often than it", d, age)
	}
}

// TestFeederSkipsARoundAlreadyAdded: a batch whose leaves the log's
// recovery re-added already (durable queued it for the feeder before
// recoverLog took the pending leaves, and it arrived after) gives the
// feeder a round with nothing to add. It goes on to the next round; the
// leaves after it still reach the log.
func TestFeederSkipsARoundAlreadyAdded(t *testing.T) {
	l := openTest(t, t.TempDir())
	appendN(t, l, 3)
	waitIntegrated(t, l, 3)
	l.feed <- feedBatch{first: 1, leaves: [][]byte{[]byte("re-added 1"), []byte("re-added 2")}}
	if _, err := l.AppendIndex(context.Background(), sampleTx(l, "after", []byte("q"), []byte("a"))); err != nil {
		t.Fatal(err)
	}
	waitIntegrated(t, l, 4)
	if err := l.failed.Load(); err != nil {
		t.Fatalf("the log failed: %v", *err)
	}
}

// waitIntegrated waits, a minute at most, until the log holds n leaves.
func waitIntegrated(t *testing.T, l *Log, n uint64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); l.integrated.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d leaves integrated after a minute, want %d", l.integrated.Load(), n)
		}
	}
}
