package ledger

import (
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
	if rate <= 0 || n <= 0 || size <= 0 || size > probeFileBytes {
		return nil, fmt.Errorf("disk probe: rate %g, n %d, size %d: each must be positive (size at most %d)", rate, n, size, probeFileBytes)
	}
	f, err := os.CreateTemp(dir, ".custody-disk-probe-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	// Zero-filled and synced first, as the journal's segments are: the
	// syncs that follow flush data only, no block allocation.
	if _, err := f.Write(make([]byte, probeFileBytes)); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	rec := make([]byte, size)
	for i := range rec {
		rec[i] = byte(i)
	}
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
