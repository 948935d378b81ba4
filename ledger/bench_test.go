package ledger

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkAppend measures durable Appends from 64 concurrent appenders:
// leaves/s acknowledged (journal fsynced), Append latency p50/p99, and
// how fast tessera integrated them (integrated-leaves/s, measured until
// the last one is in the log).
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	l, err := Open(ctx, Config{Dir: b.TempDir(), CheckpointInterval: time.Second, MaxBacklog: 1 << 22})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close(ctx)
	tx := sampleTx(l, "req", []byte("request"), []byte("response"))
	const workers = 64
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := *tx
			for i := w; i < b.N; i += workers {
				t.ID = fmt.Sprintf("req-%d", i)
				s := time.Now()
				if _, err := l.Append(ctx, &t); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(s))
			}
		}()
	}
	wg.Wait()
	acked := time.Since(start)
	for l.Size() < uint64(b.N) {
		time.Sleep(time.Millisecond)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/acked.Seconds(), "leaves/s")
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "integrated-leaves/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkAppendSerial is one appender at a time: the latency an idle
// ledger adds to a request (one fdatasync).
func BenchmarkAppendSerial(b *testing.B) {
	ctx := context.Background()
	l, err := Open(ctx, Config{Dir: b.TempDir(), CheckpointInterval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close(ctx)
	tx := sampleTx(l, "req", []byte("request"), []byte("response"))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		tx.ID = fmt.Sprintf("req-%d", i)
		s := time.Now()
		if _, err := l.Append(ctx, tx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(s))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkAppendRate is open-loop: Appends start at a fixed 1,000/s
// whatever the latency, as requests do at the gateway's target load.
func BenchmarkAppendRate(b *testing.B) {
	ctx := context.Background()
	l, err := Open(ctx, Config{Dir: b.TempDir(), CheckpointInterval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close(ctx)
	tx := sampleTx(l, "req", []byte("request"), []byte("response"))
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := *tx
			t.ID = fmt.Sprintf("req-%d", i)
			s := time.Now()
			if _, err := l.Append(ctx, &t); err != nil {
				b.Error(err)
			}
			lat[i] = time.Since(s)
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
