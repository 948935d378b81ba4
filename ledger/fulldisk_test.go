package ledger

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// diskFull is a journal fault: every write fails with ENOSPC while full.
type diskFull struct{ full atomic.Bool }

func (d *diskFull) fault(string, int64) error {
	if d.full.Load() {
		return syscall.ENOSPC
	}
	return nil
}

func TestFullDiskNotReadyThenRecovers(t *testing.T) {
	dir := t.TempDir()
	disk := &diskFull{}
	cfg := Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20,
		journalFault: disk.fault, journalRetry: 10 * time.Millisecond}
	l, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 3)
	if err := l.Ready(); err != nil {
		t.Fatalf("Ready before the disk filled: %v", err)
	}

	disk.full.Store(true)
	for i := range 5 {
		if _, err := l.AppendIndex(context.Background(), sampleTx(l, "full", nil, nil)); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("append %d on a full disk: %v", i, err)
		}
	}
	if err := l.Ready(); !errors.Is(err, ErrNotReady) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Ready on a full disk: %v", err)
	}

	disk.full.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for l.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("still not ready after space returned: %v", l.Ready())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The failed appends gave their indices back: the log stays contiguous.
	idx, err := l.AppendIndex(context.Background(), sampleTx(l, "after", nil, nil))
	if err != nil || idx != 3 {
		t.Fatalf("append after space returned: %d %v, want index 3", idx, err)
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	l = openTest(t, dir) // the journal the failures left behind is intact
	if l.Size() != 4 {
		t.Errorf("size %d after reopening, want 4", l.Size())
	}
}

func TestFailedPreparationLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	// The disk fills while the next segment is being zero-filled.
	fault := func(p string, off int64) error {
		if filepath.Base(p) == preparedName && off > 0 {
			return syscall.ENOSPC
		}
		return nil
	}
	l, err := Open(context.Background(), Config{Dir: dir, JournalSegmentSize: 2 << 20, journalFault: fault})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	l.j.preparing.Wait()
	if _, err := os.Stat(filepath.Join(dir, journalDir, preparedName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a half-written %s is left on a full disk: %v", preparedName, err)
	}
}

func TestSegmentPreallocationFailureSaysWhat(t *testing.T) {
	fault := func(p string, off int64) error {
		if off >= 4<<20 {
			return syscall.ENOSPC
		}
		return nil
	}
	_, err := Open(context.Background(), Config{Dir: t.TempDir(), JournalSegmentSize: 32 << 20, journalFault: fault})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "33554432 bytes, ledger.segment_bytes") {
		t.Fatalf("preallocation failure: %v", err)
	}
}

// TestLogFailureIsLoggedAndNotReady: when tessera cannot integrate a
// leaf (here its entry bundles' directory is replaced by a file, which
// even root cannot write into), Appends are refused, Ready says why, and
// the operator's log says what to do.
func TestLogFailureIsLoggedAndNotReady(t *testing.T) {
	dir := t.TempDir()
	var logs syncBuffer
	l, err := Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond,
		JournalSegmentSize: 1 << 20, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	entries := filepath.Join(dir, logDir, "tile", "entries")
	if err := os.RemoveAll(entries); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(entries), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entries, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendIndex(context.Background(), sampleTx(l, "journaled", nil, nil)); err != nil {
		t.Fatal(err) // durable in the journal: acknowledged
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Ready() == nil {
		if time.Now().After(deadline) {
			t.Fatal("still ready though the log cannot integrate")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.Is(l.Ready(), ErrNotReady) {
		t.Errorf("Ready: %v", l.Ready())
	}
	if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "recovery integrates them") {
		t.Errorf("the failure is not logged with what to do:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
