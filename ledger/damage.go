package ledger

import (
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/transparency-dev/tessera/api/layout"
)

// ErrCorruptJournal is the cause of Open's failure when a journal record
// that is not a torn tail does not parse: dropping what follows it could
// lose acknowledged transactions, so only an operator may (RepairJournal).
var ErrCorruptJournal = errors.New("journal is corrupt")

// Damage is the first journal record that does not parse.
type Damage struct {
	Segment string // the segment file
	Offset  int64  // where the bad record starts in it
	Index   uint64 // the index the bad record should hold
	// Torn is true when nothing intact follows the bad record in its
	// segment and the next segment, if any, starts with the record it
	// should hold, so that cutting there loses nothing: in the last
	// segment, the write a crash interrupted, whose Appends never
	// returned; in an earlier one, stray bytes in its unused end. Open
	// cuts a torn tail by itself.
	Torn bool
	// After lists the indices of the intact records found after the bad
	// one, in this and later segments: what cutting the journal there
	// drops.
	After []uint64
}

// CorruptJournalError is a Damage that is not a torn tail.
type CorruptJournalError struct{ Damage }

func (e *CorruptJournalError) Error() string {
	return fmt.Sprintf("journal segment %s is corrupt at offset %d (record %d), and %d intact records follow it: refusing to open the ledger, since dropping them could lose acknowledged transactions",
		e.Segment, e.Offset, e.Index, len(e.After))
}

func (e *CorruptJournalError) Unwrap() error { return ErrCorruptJournal }

// JournalReport is what CheckJournal found.
type JournalReport struct {
	Records  int     // intact records before any damage
	Segments int     // segment files
	Damage   *Damage // nil: the journal is intact
	// LogSize is the size of the log's published checkpoint (0 if none):
	// records below it are in the log, and losing them from the journal
	// loses nothing.
	LogSize uint64
	// Tail is the last segment file ("" if none), and End where its intact
	// records end: where the next group is written.
	Tail string
	End  int64
}

// CheckJournal reads the journal of the ledger in dir (Config.Dir)
// without changing anything. It needs no lock and may run beside nothing
// else: run it on a stopped ledger.
func CheckJournal(dir string) (*JournalReport, error) {
	recs, segs, d, err := scanJournal(filepath.Join(dir, journalDir))
	if err != nil {
		return nil, err
	}
	size, err := checkpointSize(filepath.Join(dir, logDir, layout.CheckpointPath))
	if err != nil {
		return nil, err
	}
	rep := &JournalReport{Records: len(recs), Segments: len(segs), Damage: d, LogSize: size}
	if len(segs) > 0 {
		last := segs[len(segs)-1]
		rep.Tail = filepath.Join(dir, journalDir, segmentName(last))
		data, err := os.ReadFile(rep.Tail)
		if err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		_, end, _ := findDamage(data, last, nil)
		rep.End = int64(end)
	}
	return rep, nil
}

// RepairJournal cuts the journal of the stopped ledger in dir at d, the
// damage CheckJournal reported: the segment is truncated at d.Offset and
// every later segment removed. The caller says first what that loses.
func RepairJournal(dir string, d *Damage) error {
	lock, err := lockDir(filepath.Join(dir, lockFile))
	if err != nil {
		return fmt.Errorf("repairing the journal: %w", err)
	}
	defer lock.Close()
	jdir := filepath.Join(dir, journalDir)
	_, segs, now, err := scanJournal(jdir)
	if err != nil {
		return fmt.Errorf("repairing the journal: %w", err)
	}
	if now == nil || now.Segment != d.Segment || now.Offset != d.Offset {
		return errors.New("repairing the journal: it changed since it was checked; check it again")
	}
	if err := truncate(d.Segment, d.Offset); err != nil {
		return fmt.Errorf("repairing the journal: %w", err)
	}
	for _, s := range segs {
		if p := filepath.Join(jdir, segmentName(s)); p > d.Segment {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("repairing the journal: %w", err)
			}
		}
	}
	return durable.SyncDir(jdir)
}

// checkpointSize reads the tree size of the checkpoint at p (0 if there
// is none yet). The signature is not checked: this only says which
// journal records are already in the log.
func checkpointSize(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the checkpoint: %w", err)
	}
	lines := strings.SplitN(string(b), "\n", 3)
	var size uint64
	if len(lines) < 3 {
		return 0, fmt.Errorf("reading the checkpoint %s: too short", p)
	}
	if _, err := fmt.Sscanf(lines[1], "%d", &size); err != nil {
		return 0, fmt.Errorf("reading the checkpoint %s: %w", p, err)
	}
	return size, nil
}

// warnTorn logs the torn tail Open cut off.
func warnTorn(logger *slog.Logger, d *Damage) {
	logger.Warn("journal: truncated a torn record at the end of the last segment (a write a crash interrupted; it was never acknowledged)",
		"segment", d.Segment, "offset", d.Offset, "index", d.Index)
}

// findDamage returns the first bad record of the segment data (nil if its
// records end cleanly), and the records before it. first is the segment's
// first index.
//
// A segment's records end where its zero fill begins, or at a record
// boundary holding the end mark (recordHeader zero bytes: the syncer writes
// one after each group) or a record of the file's earlier use: a segment
// recycled from one tessera had integrated (journal.recycle) still holds
// that one's records, all of indices below first, after its own. An end
// is clean only if no intact record of this segment's follows it;
// otherwise it is damage (e.g. a zeroed block in front of acknowledged
// records).
func findDamage(data []byte, first uint64, recs []journalRecord) ([]journalRecord, int, bool) {
	end := usedLen(data)
	off, want := 0, first
	for off < end {
		leaf, idx, n, ok := parseRecord(data[off:])
		if endMark(data[off:]) || ok && idx < first {
			return recs, off, len(salvage(data, off, first)) > 0
		}
		if !ok || idx != want {
			return recs, off, true
		}
		recs = append(recs, journalRecord{index: idx, leaf: leaf})
		off += n
		want++
	}
	return recs, off, false
}

// endMark reports whether b starts with the end mark the syncer writes
// after each group: a record header of zeros.
func endMark(b []byte) bool {
	if len(b) < recordHeader {
		return false
	}
	return [recordHeader]byte(b[:recordHeader]) == [recordHeader]byte{}
}

// usedLen is the length of data without its zero fill.
func usedLen(data []byte) int {
	n := len(data)
	for n > 0 && data[n-1] == 0 {
		n--
	}
	return n
}

// salvage lists the indices of the intact records in data from offset
// from on, resynchronising byte by byte past anything that does not parse.
// Only indices a segment starting at first could hold are considered, so
// that a stray match inside a leaf is improbable.
func salvage(data []byte, from int, first uint64) []uint64 {
	var out []uint64
	end := usedLen(data)
	hi := first + uint64(len(data))/recordHeader
	for o := from; o < end; {
		if o+recordHeader <= len(data) {
			if idx := beUint64(data[o+8:]); idx >= first && idx < hi {
				if _, idx, n, ok := parseRecord(data[o:]); ok {
					out = append(out, idx)
					o += n
					continue
				}
			}
		}
		o++
	}
	return out
}

func beUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}
