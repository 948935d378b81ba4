package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/tessera/api/layout"
)

// blockDir makes tessera's writes into the directory dir (relative to
// root, not yet there) fail: it becomes a file, so creating it fails with
// ENOTDIR, even for root. (A directory in a file's place is no fault:
// tessera takes the EEXIST of a bundle's rename for "already written".)
// unblock removes the file again.
func blockDir(t *testing.T, root, dir string) (unblock func()) {
	t.Helper()
	p := filepath.Join(root, dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogRecoversInProcess: tessera's writes fail (the entry bundles, or
// the hash tiles written after them) while the journal's succeed. The
// fault starts at a bundle boundary, so that the partial bundle and tile
// it blocks hold no leaf yet. Appends
// already journaled are acknowledged; then Ready says why and Appends are
// refused with ledger_unavailable; once tessera can write again the log
// recovers by itself, every acknowledged leaf at its index.
func TestLogRecoversInProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string // holds the partial bundle or tile after the first full one
	}{
		{"entry bundles", filepath.Dir(layout.EntriesPath(1, 1))},
		{"hash tiles", filepath.Dir(layout.TilePath(0, 1, 1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var logs syncBuffer
			l, err := Open(ctx, Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond,
				JournalSegmentSize: 1 << 20, Logger: slog.New(slog.NewTextHandler(&logs, nil)), logRetry: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close(ctx)
			acked := fillBundle(t, l)
			var mu sync.Mutex
			var wg sync.WaitGroup
			unblock := blockDir(t, filepath.Join(dir, logDir), tc.dir)

			// Durable in the journal, so acknowledged, though the log cannot
			// take them: the first few go before the failure is seen.
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := l.Append(ctx, sampleTx(l, fmt.Sprintf("during-%d", i), nil, nil))
					if err != nil {
						if !errors.Is(err, custody.ErrLedgerUnavailable) {
							t.Errorf("append during the fault: %v", err)
						}
						return
					}
					mu.Lock()
					acked[r.Index] = r.Leaf
					mu.Unlock()
				}()
			}
			wg.Wait()
			if len(acked) == layout.EntryBundleWidth {
				t.Fatal("no append was journaled during the fault")
			}
			deadline := time.Now().Add(10 * time.Second)
			for l.Ready() == nil {
				if time.Now().After(deadline) {
					t.Fatal("still ready though the log cannot integrate")
				}
				time.Sleep(5 * time.Millisecond)
			}
			// Several retries fail while the fault lasts.
			time.Sleep(100 * time.Millisecond)
			if err := l.Ready(); !errors.Is(err, ErrNotReady) {
				t.Fatalf("Ready during the fault: %v", err)
			}
			if _, err := l.AppendIndex(ctx, sampleTx(l, "refused", nil, nil)); !errors.Is(err, custody.ErrLedgerUnavailable) {
				t.Fatalf("append during the fault: %v", err)
			}
			if !strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("the failure is not logged:\n%s", logs.String())
			}

			unblock()
			deadline = time.Now().Add(10 * time.Second)
			var idx uint64
			for {
				r, err := l.Append(ctx, sampleTx(l, "after", nil, nil))
				if err == nil {
					idx = r.Index
					acked[r.Index] = r.Leaf
					break
				}
				if !errors.Is(err, custody.ErrLedgerUnavailable) || time.Now().After(deadline) {
					t.Fatalf("append after the fault cleared: %v (Ready: %v)", err, l.Ready())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if want := uint64(len(acked) - 1); idx != want {
				t.Errorf("first append after recovery at %d, want %d", idx, want)
			}
			rs2, _, _ := appendN(t, l, 3)
			for _, r := range rs2 {
				acked[r.Index] = r.Leaf
			}
			if err := l.Ready(); err != nil {
				t.Errorf("Ready after recovery: %v", err)
			}
			if !strings.Contains(logs.String(), "the log recovered") {
				t.Errorf("the recovery is not logged:\n%s", logs.String())
			}
			checkLog(t, l, dir, acked)
		})
	}
}

// TestCloseDuringLogRecovery: Close while the log is failed returns the
// failure, promptly, and a restart integrates what the journal holds.
func TestCloseDuringLogRecovery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := Open(ctx, Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond,
		JournalSegmentSize: 1 << 20, logRetry: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	unblock := blockDir(t, filepath.Join(dir, logDir), filepath.Dir(layout.EntriesPath(0, 1)))
	if _, err := l.AppendIndex(ctx, sampleTx(l, "journaled", nil, nil)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Ready() == nil {
		if time.Now().After(deadline) {
			t.Fatal("still ready though the log cannot integrate")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if err := l.Close(ctx); err == nil {
		t.Error("Close of a failed log returned no error")
	}
	if d := time.Since(start); d > stopTimeout+2*time.Second {
		t.Errorf("Close took %v", d)
	}
	unblock()
	l = openTest(t, dir)
	if l.Size() != 1 {
		t.Errorf("size %d after restart, want 1", l.Size())
	}
}

// waitSize waits until n leaves are integrated.
func waitSize(t *testing.T, l *Log, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Size() < n {
		if time.Now().After(deadline) {
			t.Fatalf("size %d after 10s, want %d", l.Size(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fillBundle appends a full entry bundle of leaves, concurrently, and
// returns them by index once they are integrated.
func fillBundle(t *testing.T, l *Log) map[uint64][]byte {
	t.Helper()
	acked := map[uint64][]byte{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range layout.EntryBundleWidth / 16 {
				r, err := l.Append(context.Background(), sampleTx(l, fmt.Sprintf("before-%d-%d", g, i), nil, nil))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[r.Index] = r.Leaf
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	waitSize(t, l, layout.EntryBundleWidth)
	return acked
}

// checkLog waits until every acknowledged leaf is integrated, checks that
// the log holds exactly them, each at its index, closes l and audits dir.
func checkLog(t *testing.T, l *Log, dir string, acked map[uint64][]byte) {
	t.Helper()
	ctx := context.Background()
	waitSize(t, l, uint64(len(acked)))
	found := 0
	for e, err := range l.Entries(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		want, ok := acked[e.Index]
		if !ok {
			t.Fatalf("index %d was never acknowledged", e.Index)
		}
		if !bytes.Equal(e.Leaf, want) {
			t.Fatalf("index %d holds another leaf than the one acknowledged", e.Index)
		}
		found++
	}
	if found != len(acked) {
		t.Fatalf("%d of %d acknowledged leaves in the log", found, len(acked))
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	src, err := verify.OpenSource(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Audit(ctx, src, l.Verifier(), "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Size != uint64(len(acked)) {
		t.Errorf("audited size %d, want %d", rep.Size, len(acked))
	}
}

// waitReady waits until Ready reports want (nil, or any error).
func waitReady(t *testing.T, l *Log, ready bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for (l.Ready() == nil) != ready {
		if time.Now().After(deadline) {
			t.Fatalf("Ready after 10s: %v, want ready %v", l.Ready(), ready)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLogRecoveryUnderLoad: appenders run on through the failure, the
// recovery and after: every acknowledged leaf ends up at its index, and
// the log holds nothing else.
func TestLogRecoveryUnderLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := Open(ctx, Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond,
		JournalSegmentSize: 1 << 20, logRetry: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	acked := fillBundle(t, l)
	unblock := blockDir(t, filepath.Join(dir, logDir), filepath.Dir(layout.EntriesPath(1, 1)))

	var mu sync.Mutex
	var refused, after atomic.Int64
	var recovered, stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				rec := recovered.Load()
				r, err := l.Append(ctx, sampleTx(l, fmt.Sprintf("load-%d-%d", g, i), nil, nil))
				if err != nil {
					if !errors.Is(err, custody.ErrLedgerUnavailable) {
						t.Errorf("append: %v", err)
						return
					}
					refused.Add(1)
					time.Sleep(time.Millisecond)
					continue
				}
				if rec {
					after.Add(1)
				}
				mu.Lock()
				acked[r.Index] = r.Leaf
				mu.Unlock()
			}
		}()
	}
	waitReady(t, l, false)
	time.Sleep(200 * time.Millisecond)
	unblock()
	waitReady(t, l, true)
	recovered.Store(true)
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if refused.Load() == 0 || after.Load() == 0 {
		t.Fatalf("%d appends refused during the fault, %d acknowledged after it", refused.Load(), after.Load())
	}
	t.Logf("%d acknowledged, %d refused, %d after recovery", len(acked), refused.Load(), after.Load())
	checkLog(t, l, dir, acked)
}

// TestLogRecoveryKeepsWitnesses: the appender recovery starts has the
// first one's witnesses: checkpoints after it are cosigned.
func TestLogRecoveryKeepsWitnesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := newFakeWitness(t, "w1.test")
	l, err := Open(ctx, Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond,
		JournalSegmentSize: 1 << 20, logRetry: 20 * time.Millisecond,
		Witnesses: []Witness{{Name: w.name, VKey: w.vkey, URL: w.URL + "/"}}, WitnessTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	unblock := blockDir(t, filepath.Join(dir, logDir), filepath.Dir(layout.EntriesPath(0, 1)))
	if _, err := l.AppendIndex(ctx, sampleTx(l, "journaled", nil, nil)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, l, false)
	unblock()
	waitReady(t, l, true)
	idx, err := l.AppendIndex(ctx, sampleTx(l, "after", nil, nil))
	if err != nil || idx != 1 {
		t.Fatalf("append after recovery: %d %v, want index 1", idx, err)
	}
	r := integrated(t, l, idx, "after")
	if !r.Cosigned {
		t.Errorf("checkpoint after recovery not cosigned:\n%s", r.Checkpoint)
	}
}
