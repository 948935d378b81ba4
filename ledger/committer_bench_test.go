package ledger

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppendBesideWork is the gateway's case in miniature: 64
// workers each do a fixed piece of CPU work (~50 µs: parsing, checks)
// and then Append. Run it with -cpu 1: while the journal's fdatasync
// waits for the disk the only P must go on serving the workers, so tx/s
// should approach the rate the CPU work alone allows. Sub-benchmarks:
// the journal's syncer through AIO and through fdatasync(2), whatever
// -cpu is (the journal itself picks AIO only at GOMAXPROCS=1).
func BenchmarkAppendBesideWork(b *testing.B) {
	for _, plain := range []bool{false, true} {
		name := "syncer=aio"
		if plain {
			name = "syncer=fdatasync"
		}
		b.Run(name, func(b *testing.B) { appendBesideWork(b, plain) })
	}
}

func appendBesideWork(b *testing.B, plain bool) {
	ctx := context.Background()
	l, err := Open(ctx, Config{Dir: b.TempDir(), CheckpointInterval: time.Second, BatchMaxAge: 100 * time.Millisecond, MaxBacklog: 1 << 22})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close(ctx)
	// Before the first Append, which orders it before the syncer's first
	// use of ds.
	l.j.ds.close()
	if !plain {
		l.j.ds = newAIOSyncer()
	}
	tx := sampleTx(l, "req", []byte("request"), []byte("response"))
	const workers = 64
	iters := calibrate(50 * time.Microsecond)
	var next atomic.Int64
	var wg sync.WaitGroup
	syncs := l.JournalSyncs()
	b.ResetTimer()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := *tx
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				spin(iters)
				t.ID = fmt.Sprintf("req-%d", i)
				if _, err := l.AppendIndex(ctx, &t); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	b.ReportMetric(float64(b.N)/wall.Seconds(), "tx/s")
	b.ReportMetric(float64(l.JournalSyncs()-syncs)/wall.Seconds(), "fsyncs/s")
}

var sink int

// spin does n iterations of busy work.
func spin(n int) {
	x := 0
	for i := range n {
		x += i ^ (x >> 3)
	}
	sink += x
}

// calibrate is the n for which spin(n) takes about d here.
func calibrate(d time.Duration) int {
	n := 1 << 10
	for {
		s := time.Now()
		spin(n)
		if e := time.Since(s); e >= 5*time.Millisecond {
			return int(float64(n) * float64(d) / float64(e))
		}
		n *= 2
	}
}
