package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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

// encodeRecord is a journal record as append writes it.
func encodeRecord(idx uint64, leaf []byte) []byte {
	var h [recordHeader]byte
	binary.BigEndian.PutUint32(h[0:], uint32(len(leaf)))
	binary.BigEndian.PutUint64(h[8:], idx)
	binary.BigEndian.PutUint32(h[4:], crc32.Update(crc32.Update(0, crcTable, h[8:]), crcTable, leaf))
	return append(h[:], leaf...)
}

func writeSegment(t *testing.T, dir string, first uint64, n int, size int) string {
	t.Helper()
	var b []byte
	for i := range n {
		b = append(b, encodeRecord(first+uint64(i), fmt.Appendf(nil, `{"leaf":%d}`, first+uint64(i)))...)
	}
	p := filepath.Join(dir, segmentName(first))
	if err := os.WriteFile(p, append(b, make([]byte, size-len(b))...), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJournalDamageCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, seg0, seg5 string)
		torn    bool // cut off by itself; else refused
		records int  // read when cut
		clean   bool // no damage: the records end before the bytes changed
	}{
		// Stray bytes in the unused end of an earlier segment, whose next
		// segment starts where its records stop: nothing is lost.
		{"stray bytes right after an earlier segment's records", func(t *testing.T, seg0, _ string) {
			patch(t, seg0, 5*int64(len(encodeRecord(0, []byte(`{"leaf":0}`)))), []byte{7})
		}, true, 7, false},
		// Past the zeros that end its records (the end mark the syncer
		// writes after each group, or the zero fill), bytes that hold
		// no record of the segment are not read: a recycled segment's
		// older records lie there.
		{"stray bytes past an earlier segment's end", func(t *testing.T, seg0, _ string) { patch(t, seg0, 3000, []byte{7}) }, false, 7, true},
		{"an older record past a segment's end", func(t *testing.T, _, seg5 string) {
			patch(t, seg5, 2*int64(len(encodeRecord(5, []byte(`{"leaf":5}`)))), encodeRecord(3, []byte(`{"leaf":3}`)))
		}, false, 7, true},
		// Zeros in front of records the segment holds are damage: they
		// would be lost.
		{"zeros in front of an earlier segment's records", func(t *testing.T, seg0, _ string) { patch(t, seg0, 0, make([]byte, recordHeader)) }, false, 0, false},
		{"torn last record", func(t *testing.T, _, seg5 string) {
			patch(t, seg5, 2*int64(len(encodeRecord(5, []byte(`{"leaf":5}`)))), []byte{0, 0, 0, 90, 1})
		}, true, 7, false},
		// A flipped byte in an earlier segment's records: the rest of it,
		// and the later segment, would be lost.
		{"flipped byte in an earlier segment", func(t *testing.T, seg0, _ string) { patch(t, seg0, 20, []byte{'X'}) }, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			seg0 := writeSegment(t, dir, 0, 5, 4096)
			seg5 := writeSegment(t, dir, 5, 2, 4096)
			tc.corrupt(t, seg0, seg5)
			recs, _, d, err := readJournal(dir)
			if tc.clean {
				if err != nil || d != nil || len(recs) != tc.records {
					t.Fatalf("want %d records and no damage: %v %+v %d", tc.records, err, d, len(recs))
				}
				return
			}
			if !tc.torn {
				var ce *CorruptJournalError
				if !errors.As(err, &ce) || len(ce.After) != 6 {
					t.Fatalf("want refused with 6 intact records after the damage, got %v (%+v)", err, ce)
				}
				return
			}
			if err != nil || d == nil || !d.Torn || len(recs) != tc.records {
				t.Fatalf("want cut off with %d records: %v %+v %d", tc.records, err, d, len(recs))
			}
		})
	}
}
