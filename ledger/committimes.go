package ledger

import (
	"sync/atomic"
	"time"
)

// A group commit's time (its write and its fdatasync) is what the disk
// adds to every durable answer: a request that finds the syncer idle
// waits for one commit, one that arrives during a commit waits for the
// rest of it and then its own. The journal keeps a histogram of them so
// that an operator (custody_ledger_commit_seconds) and the benchmark can
// tell a slow disk from a slow gateway.

// CommitBounds are the histogram's upper bounds: a factor of about √2
// from 25 µs (below any fdatasync seen) to 2.3 s (a disk in trouble),
// fine enough to read a quantile off within 20 %.
var CommitBounds = func() []time.Duration {
	var b []time.Duration
	for d := 25 * time.Microsecond; d <= 2*time.Second; {
		b = append(b, d, d*1414/1000)
		d *= 2
	}
	return b
}()

// commitTimes is the histogram; every field is updated atomically by the
// syncer and read by anyone.
type commitTimes struct {
	counts []atomic.Uint64 // per bucket of CommitBounds, plus one past the last
	sum    atomic.Int64    // nanoseconds
}

func newCommitTimes() *commitTimes {
	return &commitTimes{counts: make([]atomic.Uint64, len(CommitBounds)+1)}
}

func (c *commitTimes) observe(d time.Duration) {
	i := 0
	for i < len(CommitBounds) && d > CommitBounds[i] {
		i++
	}
	c.counts[i].Add(1)
	c.sum.Add(int64(d))
}

// JournalCommitTimes reports how long the journal's group commits took
// (one write and one fdatasync each, successful or not) since the log
// was opened: cumulative[i] is how many took at most CommitBounds[i],
// count is all of them (the last bucket is +Inf), sum their total time.
func (l *Log) JournalCommitTimes() (cumulative []uint64, count uint64, sum time.Duration) {
	c := l.j.commitTimes
	cumulative = make([]uint64, len(CommitBounds))
	for i := range c.counts {
		count += c.counts[i].Load()
		if i < len(CommitBounds) {
			cumulative[i] = count
		}
	}
	return cumulative, count, time.Duration(c.sum.Load())
}
