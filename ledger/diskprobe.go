package ledger

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"
)

// probeFileBytes bounds ProbeDisk's scratch file; its writes wrap around
// in it.
const probeFileBytes = 8 << 20

// ProbeDisk times what a journal commit costs on the filesystem of dir:
// n times, at rate per second on a fixed schedule (a sync that overruns
// its slot delays the next; none is skipped), one write of size bytes at
// the next offset of a zero-filled, synced scratch file and one
// fdatasync, as the journal's group commit does. It returns each write
// and sync's time and removes the file.
//
// A commit's cost is the floor of a durable answer's added latency, and
// on a virtual disk it depends on how often commits come (the fewer, the
// slower each: the virtual CPU has gone idle between them), hence the
// rate: probe at the commit rate the gateway will see.
func ProbeDisk(ctx context.Context, dir string, rate float64, n, size int) ([]time.Duration, error) {
	if err := probeArgs(rate, n, size); err != nil {
		return nil, err
	}
	f, done, err := probeFile(dir)
	if err != nil {
		return nil, err
	}
	defer done()
	rec := probeRecord(size)
	lat := make([]time.Duration, 0, n)
	every := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	var off int64
	for range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(every)
		if off+int64(size) > probeFileBytes {
			off = 0
		}
		began := time.Now()
		if _, err := f.WriteAt(rec, off); err != nil {
			return nil, err
		}
		if err := fdatasync(f); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(began))
		off += int64(size)
	}
	return lat, nil
}

// ProbeCommits times what the disk alone makes a request wait for in a
// gateway that answers only once the request's record is durable and
// commits as custody's journal does: n requests arrive at rate per second
// on a fixed schedule (as the bench's open loop sends them); each commit
// writes the records of every request that has arrived since the last
// one (size bytes each) in one write, then one fdatasync. A request's
// time runs from its arrival (or from the committer's wake, if it slept
// past it) to the end of the commit that holds it, so
// it includes the rest of the commit in flight when it arrived, and one
// slow fdatasync delays every request that arrives while it lasts, as it
// delays the gateway's answers: ProbeDisk's times, one a sync from its
// start, show neither. It returns each request's time and the number of
// commits, and removes its file.
func ProbeCommits(ctx context.Context, dir string, rate float64, n, size int) ([]time.Duration, int, error) {
	if err := probeArgs(rate, n, size); err != nil {
		return nil, 0, err
	}
	f, done, err := probeFile(dir)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	rec := probeRecord(size)
	var off int64
	commit := func(k int) error {
		b := bytes.Repeat(rec, k)
		if len(b) > probeFileBytes {
			b = b[:probeFileBytes]
		}
		if off+int64(len(b)) > probeFileBytes {
			off = 0
		}
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
		return fdatasync(f)
	}
	return groupCommits(ctx, time.Duration(float64(time.Second)/rate), n, time.Now(), commit)
}

// groupCommits runs n arrivals, every apart from start, through commit,
// which makes the k arrivals due so far durable at once; it returns each
// arrival's time from its schedule (or, when the committer was asleep
// past it, from its wake) to the end of its commit, and the number of
// commits.
func groupCommits(ctx context.Context, every time.Duration, n int, start time.Time, commit func(k int) error) ([]time.Duration, int, error) {
	lat := make([]time.Duration, 0, n)
	commits := 0
	for len(lat) < n {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		// Idle until the next arrival. A sleep ends late (the timer, the
		// CPU waking): an arrival in that time found the committer idle,
		// as a request finds a gateway that its arrival wakes, so it is
		// timed from the wake, not from its schedule; that wake-up is
		// the proxy's as much as the disk's, and bare's latency has it.
		var woke time.Time
		first := start.Add(time.Duration(len(lat)) * every)
		if d := time.Until(first); d > 0 {
			time.Sleep(d)
			woke = time.Now()
		}
		// Every arrival whose time has come joins this commit.
		k := max(min(int(time.Since(start)/every)+1, n)-len(lat), 1)
		if err := commit(k); err != nil {
			return nil, 0, err
		}
		commits++
		end, base := time.Now(), len(lat)
		for i := range k {
			arrived := start.Add(time.Duration(base+i) * every)
			if arrived.Before(woke) {
				arrived = woke
			}
			lat = append(lat, end.Sub(arrived))
		}
	}
	return lat, commits, nil
}

// probeArgs refuses a probe that could not run: each of rate, n and size
// positive, size at most the scratch file.
func probeArgs(rate float64, n, size int) error {
	if rate <= 0 || n <= 0 || size <= 0 || size > probeFileBytes {
		return fmt.Errorf("disk probe: rate %g, n %d, size %d: each must be positive (size at most %d)", rate, n, size, probeFileBytes)
	}
	return nil
}

// probeFile is a scratch file in dir, zero-filled and synced first as
// the journal's segments are (the syncs that follow flush data only, no
// block allocation), and the function that removes it.
func probeFile(dir string) (*os.File, func(), error) {
	f, err := os.CreateTemp(dir, ".custody-disk-probe-")
	if err != nil {
		return nil, nil, err
	}
	done := func() { f.Close(); os.Remove(f.Name()) }
	if _, err := f.Write(make([]byte, probeFileBytes)); err != nil {
		done()
		return nil, nil, err
	}
	if err := f.Sync(); err != nil {
		done()
		return nil, nil, err
	}
	return f, done, nil
}

// probeRecord is size bytes of a record's worth of data.
func probeRecord(size int) []byte {
	rec := make([]byte, size)
	for i := range rec {
		rec[i] = byte(i)
	}
	return rec
}
