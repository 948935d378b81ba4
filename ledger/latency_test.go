package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestIntegrationLatency: every receipt comes to carry a published
// checkpoint (what `custody verify --log` needs), with serve's batch_max_age
// (250ms) and the default checkpoint interval (the least tessera allows),
// at a light irregular load; it measures how long after Append that takes.
// docs/ledger.md quotes the figures, measured with
// CUSTODY_MEASURE=1, which also holds them to the design bound: on a
// loaded machine the wall clock measures the machine, so a plain run
// asserts the outcome (every entry published) and only logs the figures.
// With the old 1s checkpoint interval p50 was ~1s.
func TestIntegrationLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a few seconds; skipped with -short")
	}
	const batchMaxAge = 250 * time.Millisecond
	l, err := Open(context.Background(), Config{Dir: t.TempDir(), BatchMaxAge: batchMaxAge, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	if l.cfg.CheckpointInterval != minCheckpointInterval {
		t.Errorf("default checkpoint interval %s, want tessera's least, %s", l.cfg.CheckpointInterval, minCheckpointInterval)
	}
	const n = 120
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("lat-%d", i)
		r, err := l.Append(context.Background(), sampleTx(l, id, []byte("q"), []byte("a")))
		if err != nil {
			t.Fatal(err)
		}
		acked := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(acked) < time.Minute {
				rc, err := l.Receipt(context.Background(), r.Index, id)
				if err == nil && rc.Checkpoint != "" {
					lat[i] = time.Since(acked)
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
			lat[i] = time.Hour
		}()
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
	}
	wg.Wait()
	slices.Sort(lat)
	p50, p99, worst := lat[n/2], lat[n*99/100], lat[n-1]
	t.Logf("integration latency (durable -> in a published checkpoint), batch_max_age %s: p50 %s, p99 %s, max %s",
		batchMaxAge, p50.Round(time.Millisecond), p99.Round(time.Millisecond), worst.Round(time.Millisecond))
	if worst == time.Hour {
		t.Fatalf("an entry carried no published checkpoint a minute after it was durable")
	}
	// batch_max_age plus one checkpoint interval is the design bound
	// (~350ms); a 2-core machine running the whole suite doubles it.
	if os.Getenv("CUSTODY_MEASURE") != "" && (p50 > 3*batchMaxAge || p99 > 6*batchMaxAge) {
		t.Errorf("integration too slow: p50 %s, p99 %s with batch_max_age %s", p50, p99, batchMaxAge)
	}
}
