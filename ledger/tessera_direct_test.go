package ledger

import (
	"context"
	"crypto/rand"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"
)

// BenchmarkTesseraDirect measures what awaiting tessera POSIX sequencing
// (Add + future) costs with 64 concurrent appenders and 2 ms batching: the
// figure that decided for the journal (docs/ledger.md).
func BenchmarkTesseraDirect(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	skey, _, err := note.GenerateKey(rand.Reader, "bench/log")
	if err != nil {
		b.Fatal(err)
	}
	s, _ := note.NewSigner(skey)
	d, err := posix.New(ctx, posix.Config{Path: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	app, shutdown, _, err := tessera.NewAppender(ctx, d, tessera.NewAppendOptions().
		WithCheckpointSigner(s).WithBatching(4096, 2*time.Millisecond).WithCheckpointInterval(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer shutdown(ctx)
	const workers = 64
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	start := time.Now()
	n := b.N
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				t := time.Now()
				if _, err := app.Add(ctx, tessera.NewEntry([]byte(fmt.Sprintf("leaf %d", i))))(); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(n)/el.Seconds(), "leaves/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
