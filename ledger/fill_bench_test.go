package ledger

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkCommitsBesideAFill is why the journal recycles its segments
// (journal.prepare): the open loop of ledger.ProbeCommits (1,000 requests
// a second, 2 s, each committed as the journal commits) alone, and with a
// segment of ledger.segment_bytes' default zero-filled beside it, as the
// journal prepared its next segment before segments were recycled. Each
// commit's fdatasync waits at the disk behind the fill's writes. Run with
// -benchtime=1x; compare the two lines' p99 and max in the same run.
func BenchmarkCommitsBesideAFill(b *testing.B) {
	for _, fill := range []bool{false, true} {
		name := "alone"
		if fill {
			name = "fill"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			j := &journal{segMax: 32 << 20}
			var all []time.Duration
			for range b.N {
				done := make(chan error, 1)
				if fill {
					go func() {
						time.Sleep(300 * time.Millisecond) // into the probe's stride
						ds := newDataSyncer()
						defer ds.close()
						f, err := j.zeroFile(filepath.Join(dir, preparedName), ds)
						if err == nil {
							f.Close()
						}
						done <- err
					}()
				} else {
					done <- nil
				}
				lat, _, err := ProbeCommits(context.Background(), dir, 1000, 2000, 1360)
				if err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				all = append(all, lat...)
			}
			slices.Sort(all)
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(all[len(all)-1].Microseconds()), "max-µs")
		})
	}
}
