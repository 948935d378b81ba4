package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"
)

// ledgerResult is the ledger's figures.
type ledgerResult struct {
	Appenders    int
	Appended     int64
	AppendTime   time.Duration
	LeavesPerSec float64
	// Append latency under the 64 appenders, and of one appender alone
	// (what an idle ledger adds to a request: one group-commit fsync).
	P50, P99             time.Duration
	SerialP50, SerialP99 time.Duration
	AuditLeaves          int
	BuildTime            time.Duration // writing the audited log (not a target)
	AuditTime            time.Duration
}

// sampleTx is a served transaction as the gateway records it.
func sampleTx(l *ledger.Log, id string) *custody.Transaction {
	rs, ps := l.Salts(id)
	tx := &custody.Transaction{
		ID: id, Tenant: "bench", Time: time.Now(),
		Endpoint: "chat.completions", RequestedModel: "sim-1", Provider: "sim",
		UpstreamModel: "sim-1", ResponseModel: "sim-1", Fingerprint: "fp_sim", ResponseID: "chatcmpl-0123456789abcdef",
		FallbackChain: []string{"sim"}, Policy: "default", Decision: "sim", Verdict: custody.Verified, Status: 200,
		PromptTokensLocal: 40, PromptTokensReported: 41, CompletionTokens: 16,
		RequestCommitment: verify.Commit(rs, chatBody), ResponseCommitment: verify.Commit(ps, chatBody),
		Duration: 1500 * time.Microsecond,
	}
	for _, c := range []string{custody.CheckCapacity, custody.CheckPromptTokens, custody.CheckModel,
		custody.CheckRequestID, custody.CheckReplay, custody.CheckShape, custody.CheckContamination} {
		tx.Pass(c, "")
	}
	return tx
}

// runLedgerAppend appends from appenders goroutines for d through the
// public API (ledger.Open, Append): every Append returns once its leaf is
// durable.
func runLedgerAppend(ctx context.Context, appenders int, d time.Duration) (ledgerResult, error) {
	r := ledgerResult{Appenders: appenders}
	dir, err := os.MkdirTemp("", "custody-bench-ledger-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	l, err := ledger.Open(ctx, ledger.Config{Dir: dir})
	if err != nil {
		return r, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		l.Close(cctx)
	}()
	tmpl := sampleTx(l, "tmpl")
	var n atomic.Int64
	var firstErr atomic.Pointer[error]
	deadline := time.Now().Add(d)
	start := time.Now()
	lat := make([][]time.Duration, appenders)
	var wg sync.WaitGroup
	for w := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := *tmpl
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				t.ID = "req-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				s := time.Now()
				if _, err := l.Append(ctx, &t); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				lat[w] = append(lat[w], time.Since(s))
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	r.AppendTime = time.Since(start)
	if p := firstErr.Load(); p != nil {
		return r, fmt.Errorf("append: %w", *p)
	}
	r.Appended = n.Load()
	r.LeavesPerSec = float64(r.Appended) / r.AppendTime.Seconds()
	all := slices.Concat(lat...)
	r.P50, r.P99 = pct(all, 0.5), pct(all, 0.99)

	// One appender alone, for a fifth of the time.
	var serial []time.Duration
	t := *tmpl
	for i, end := 0, time.Now().Add(d/5); time.Now().Before(end) && ctx.Err() == nil; i++ {
		t.ID = "serial-" + strconv.Itoa(i)
		s := time.Now()
		if _, err := l.Append(ctx, &t); err != nil {
			return r, fmt.Errorf("append: %w", err)
		}
		serial = append(serial, time.Since(s))
	}
	r.SerialP50, r.SerialP99 = pct(serial, 0.5), pct(serial, 0.99)
	return r, nil
}

// runAudit writes a log of n leaves and audits it with verify.Audit. The
// ledger exports no way to build a large log quickly, so, like the
// ledger's own BenchmarkAudit1M, the leaves (real encoded leaves, made
// unique) go straight through tessera's POSIX driver: the journal is not
// what is measured here, and the audit reads only the public files.
func runAudit(ctx context.Context, n int, log io.Writer) (ledgerResult, error) {
	r := ledgerResult{AuditLeaves: n}
	dir, err := os.MkdirTemp("", "custody-bench-audit-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	skey, vkey, err := note.GenerateKey(rand.Reader, "bench.custody/log")
	if err != nil {
		return r, err
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return r, err
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return r, err
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	drv, err := posix.New(tctx, posix.Config{Path: dir})
	if err != nil {
		return r, err
	}
	app, shutdown, _, err := tessera.NewAppender(tctx, drv, tessera.NewAppendOptions().
		WithCheckpointSigner(signer).WithBatching(1<<14, time.Second).WithCheckpointInterval(100*time.Millisecond))
	if err != nil {
		return r, err
	}
	tx := &custody.Transaction{}
	*tx = custody.Transaction{ID: "0123456789abcdef0123456789abcdef", Tenant: "3f1c2a9d0b7e4c6a8d5e2f1a0b9c8d7e",
		Time: time.Now(), Endpoint: "chat.completions", RequestedModel: "sim-1", Provider: "sim",
		UpstreamModel: "sim-1", ResponseModel: "sim-1", Fingerprint: "fp_sim", ResponseID: "chatcmpl-1",
		FallbackChain: []string{"sim"}, Policy: "default", Decision: "sim", Verdict: custody.Verified, Status: 200,
		PromptTokensLocal: 40, PromptTokensReported: 41, CompletionTokens: 16,
		RequestCommitment: make([]byte, 32), ResponseCommitment: make([]byte, 32)}
	tmpl, err := verify.EncodeLeaf(tx)
	if err != nil {
		return r, err
	}
	start := time.Now()
	var last tessera.IndexFuture
	for i := range n {
		leaf := append([]byte(fmt.Sprintf("%09d", i)), tmpl[9:]...)
		last = app.Add(tctx, tessera.NewEntry(leaf))
		if i%(1<<14) == 1<<14-1 {
			if _, err := last(); err != nil {
				return r, err
			}
		}
	}
	if _, err := last(); err != nil {
		return r, err
	}
	// Wait for a checkpoint that covers every leaf.
	if err := shutdown(tctx); err != nil {
		return r, err
	}
	r.BuildTime = time.Since(start)
	fmt.Fprintf(log, "audit: wrote %d leaves in %v\n", n, r.BuildTime.Round(time.Millisecond))
	src, err := verify.OpenSource(dir)
	if err != nil {
		return r, err
	}
	start = time.Now()
	rep, err := verify.Audit(ctx, src, verifier, "")
	if err != nil {
		return r, fmt.Errorf("audit: %w", err)
	}
	r.AuditTime = time.Since(start)
	if rep.Size != uint64(n) {
		return r, fmt.Errorf("audit: checkpoint covers %d leaves, want %d", rep.Size, n)
	}
	return r, nil
}
