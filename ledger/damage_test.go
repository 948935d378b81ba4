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
	"testing"
	"time"
)

// journalWith appends n transactions to a new ledger in dir, closes it
// and returns the path of its (only) journal segment and the length of
// its records.
func journalWith(t *testing.T, dir string, n int) (string, int) {
	t.Helper()
	l, err := Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, n)
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, journalDir, segmentName(0))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, usedLen(data)
}

func reopen(dir string, logger *slog.Logger) (*Log, error) {
	return Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20, Logger: logger})
}

func patch(t *testing.T, p string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptJournalRefusesToOpen(t *testing.T) {
	dir := t.TempDir()
	p, used := journalWith(t, dir, 40)
	data, _ := os.ReadFile(p)
	patch(t, p, int64(used/2), []byte{data[used/2] ^ 0x01})

	_, err := reopen(dir, nil)
	var ce *CorruptJournalError
	if !errors.Is(err, ErrCorruptJournal) || !errors.As(err, &ce) {
		t.Fatalf("a journal with a flipped byte mid-segment opened: %v", err)
	}
	if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", ce.Offset)) {
		t.Errorf("error does not name the segment and offset: %v", err)
	}
	if ce.Torn || len(ce.After) == 0 || ce.After[len(ce.After)-1] != 39 {
		t.Errorf("damage %+v: want later records up to 39 listed", ce.Damage)
	}
	// Nothing was cut: refusing must not change the journal.
	if after, _ := os.ReadFile(p); usedLen(after) != used {
		t.Errorf("refusing to open changed the segment: %d bytes of records, was %d", usedLen(after), used)
	}

	// check reports the same; repair cuts there, and the ledger opens.
	rep, err := CheckJournal(dir)
	if err != nil || rep.Damage == nil || rep.Damage.Offset != ce.Offset || rep.LogSize != 40 {
		t.Fatalf("CheckJournal: %+v %v", rep, err)
	}
	if err := RepairJournal(dir, rep.Damage); err != nil {
		t.Fatal(err)
	}
	l, err := reopen(dir, nil)
	if err != nil {
		t.Fatalf("after repair: %v", err)
	}
	defer l.Close(context.Background())
	if l.Size() != 40 {
		t.Errorf("log size %d after repair, want 40 (every cut record was in the log)", l.Size())
	}
}

func TestTornTailIsTruncatedAndLogged(t *testing.T) {
	for name, tail := range map[string][]byte{
		// A header promising more bytes than reached the disk.
		"short": {0, 0, 0, 200, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 40, '{', '"'},
		// A header whose leaf is zeros: the data pages never landed.
		"zero-filled": {0, 0, 0, 8, 9, 9, 9, 9, 0, 0, 0, 0, 0, 0, 0, 40},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p, used := journalWith(t, dir, 40)
			patch(t, p, int64(used), tail)

			var logs bytes.Buffer
			l, err := reopen(dir, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatalf("a torn tail refused to open: %v", err)
			}
			defer l.Close(context.Background())
			out := logs.String()
			if !strings.Contains(out, "level=WARN") || !strings.Contains(out, p) || !strings.Contains(out, fmt.Sprintf("offset=%d", used)) {
				t.Errorf("torn tail not logged at WARN with segment and offset:\n%s", out)
			}
			if fi, err := os.Stat(p); err != nil || fi.Size() != int64(used) {
				t.Errorf("segment not truncated at %d: %v %v", used, fi.Size(), err)
			}
			if _, err := l.AppendIndex(context.Background(), sampleTx(l, "after", nil, nil)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
