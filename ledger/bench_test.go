package ledger

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"
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
// Sub-benchmarks by ledger.batch_max_age: larger tessera batches mean
// fewer fsyncs competing with the journal's.
func BenchmarkAppendRate(b *testing.B) {
	for _, age := range []time.Duration{2 * time.Millisecond, 50 * time.Millisecond} {
		b.Run("batch_max_age="+age.String(), func(b *testing.B) {
			ctx := context.Background()
			l, err := Open(ctx, Config{Dir: b.TempDir(), CheckpointInterval: time.Second, BatchMaxAge: age})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close(ctx)
			tx := sampleTx(l, "req", []byte("request"), []byte("response"))
			openLoop(b, func(i int) error {
				t := *tx
				t.ID = fmt.Sprintf("req-%d", i)
				_, err := l.Append(ctx, &t)
				return err
			})
		})
	}
}

// BenchmarkTesseraDirectRate is BenchmarkAppendRate with tessera's own
// Add + await instead of the journal: the latency the journal saves.
func BenchmarkTesseraDirectRate(b *testing.B) {
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
		WithCheckpointSigner(s).WithBatching(1024, 2*time.Millisecond).WithCheckpointInterval(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer shutdown(ctx)
	openLoop(b, func(i int) error {
		_, err := app.Add(ctx, tessera.NewEntry(fmt.Appendf(nil, "leaf %d", i)))()
		return err
	})
}

// openLoop starts op at 1,000/s for b.N operations and reports the
// latency percentiles.
func openLoop(b *testing.B, op func(i int) error) {
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
			s := time.Now()
			if err := op(i); err != nil {
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

// writeBigLog writes n realistic leaves straight through tessera (the
// journal is not what is measured here) and returns the log directory
// and its verifier.
func writeBigLog(b *testing.B, n int) (string, note.Verifier) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	skey, vkey, err := note.GenerateKey(rand.Reader, "bench.custody/log")
	if err != nil {
		b.Fatal(err)
	}
	s, _ := note.NewSigner(skey)
	v, _ := note.NewVerifier(vkey)
	dir := b.TempDir()
	d, err := posix.New(ctx, posix.Config{Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	app, shutdown, _, err := tessera.NewAppender(ctx, d, tessera.NewAppendOptions().
		WithCheckpointSigner(s).WithBatching(1<<14, time.Second).WithCheckpointInterval(100*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	tx := &custody.Transaction{}
	tmpl, err := verify.EncodeLeaf(sampleTxWithSalts(tx))
	if err != nil {
		b.Fatal(err)
	}
	var last tessera.IndexFuture
	for i := range n {
		leaf := append([]byte(fmt.Sprintf("%09d", i)), tmpl[9:]...) // unique, leaf-sized
		last = app.Add(ctx, tessera.NewEntry(leaf))
		if i%(1<<14) == 1<<14-1 {
			if _, err := last(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := last(); err != nil {
		b.Fatal(err)
	}
	if err := shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	return dir, v
}

// sampleTxWithSalts fills tx like a served transaction, without a Log.
func sampleTxWithSalts(tx *custody.Transaction) *custody.Transaction {
	*tx = custody.Transaction{
		ID: "0123456789abcdef0123456789abcdef", Tenant: "3f1c2a9d0b7e4c6a8d5e2f1a0b9c8d7e", Time: time.Now(),
		Endpoint: "chat.completions", RequestedModel: "glm-5.3", Provider: "primary", Region: "eu-west-1",
		UpstreamModel: "glm-5.3-0827", ResponseModel: "glm-5.3-0827", Fingerprint: "fp_1", ResponseID: "chatcmpl-1",
		FallbackChain: []string{"primary"}, Policy: "default", Decision: "primary", Verdict: custody.Verified, Status: 200,
		PromptTokensLocal: 1200, PromptTokensReported: 1204, CompletionTokens: 300,
		RequestCommitment: make([]byte, 32), ResponseCommitment: make([]byte, 32),
	}
	for _, c := range []string{custody.CheckCapacity, custody.CheckPromptTokens, custody.CheckModel, custody.CheckRequestID, custody.CheckReplay, custody.CheckShape, custody.CheckContamination} {
		tx.Pass(c, "")
	}
	return tx
}

// BenchmarkAudit1M audits a log of 1,000,000 leaves from its directory
// (goal: <= 10 s). Generating the log takes a while; run it alone with
// -benchtime 1x.
func BenchmarkAudit1M(b *testing.B) {
	const n = 1_000_000
	dir, v := writeBigLog(b, n)
	src, err := verify.OpenSource(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rep, err := verify.Audit(context.Background(), src, v, "")
		if err != nil {
			b.Fatal(err)
		}
		if rep.Size != n {
			b.Fatalf("audited %d leaves", rep.Size)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/audit")
}

// BenchmarkStartCheck1M is what Open's start check (checkStored) costs on
// a log of 1,000,000 leaves, beside an audit of the same log in the same
// run (the machine's load moves both alike). The journal holds the last
// 32,768 leaves, as a full 32 MiB segment of ~1 KB leaves would. Run it
// alone with -benchtime 1x.
func BenchmarkStartCheck1M(b *testing.B) {
	const n, journaled = 1_000_000, 32768
	dir, v := writeBigLog(b, n)
	src, err := verify.OpenSource(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var recs []journalRecord
	for bi := uint64(n-journaled) / layout.EntryBundleWidth; bi*layout.EntryBundleWidth < n; bi++ {
		raw, err := src.ReadEntryBundle(ctx, bi, layout.PartialTileSize(0, bi, n))
		if err != nil {
			b.Fatal(err)
		}
		var eb api.EntryBundle
		if err := eb.UnmarshalText(raw); err != nil {
			b.Fatal(err)
		}
		for k, e := range eb.Entries {
			if i := bi*layout.EntryBundleWidth + uint64(k); i >= n-journaled {
				recs = append(recs, journalRecord{index: i, leaf: e})
			}
		}
	}
	b.Run("audit", func(b *testing.B) {
		for range b.N {
			if _, err := verify.Audit(ctx, src, v, ""); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/op")
	})
	b.Run("startcheck", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if err := checkStored(ctx, dir, v, recs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/op")
	})
}
