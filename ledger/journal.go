package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody/verify"
)

// The journal is where a leaf becomes durable. It is a directory of
// append-only segment files named by the index of their first record
// (%016x.wal). A record is
//
//	uint32 length of leaf | uint32 CRC-32C of (index || leaf) | uint64 index | leaf
//
// big-endian. Indices are assigned here, contiguously, under one lock, so
// the journal order is the log order. One goroutine (the syncer) writes
// whatever has accumulated since its last fsync in a single write and
// fdatasync, then releases every Append of that group: a group commit
// with no timer, so an idle ledger adds one fsync of latency and a busy
// one shares each fsync among everyone who arrived during the last.
const (
	recordHeader  = 16
	segmentSuffix = ".wal"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// commit is one group: the Appends whose records one fsync made durable.
type commit struct {
	done   chan struct{} // closed when err is set and the group is durable or failed
	err    error
	first  uint64
	leaves [][]byte
}

// journal is the durable, ordered queue in front of tessera.
type journal struct {
	dir    string
	segMax int64 // bytes preallocated per segment
	// durable is called by the syncer, in index order, with each group
	// after its fsync and before its Appends are released.
	durable func(first uint64, leaves [][]byte)
	// integrated reports how much of the journal tessera holds, so that
	// fully integrated segments can be removed.
	integrated func() uint64

	// fault, if set, is called before every write to a journal file
	// (path, offset); an error it returns is that write's. Tests inject
	// a full disk or an I/O error with it (root ignores permissions).
	fault func(path string, off int64) error
	// retry is how often a failed journal tries to recover (default 1s).
	retry time.Duration

	mu     sync.Mutex // guards next, buf, cur, closed, err
	next   uint64
	buf    []byte
	cur    *commit
	closed bool
	// err is set when a write failed, and cleared when the syncer has
	// recovered (cut the failed bytes off and started a new segment):
	// meanwhile every Append fails with it.
	err error

	// syncs counts the group commits' fdatasyncs that succeeded.
	syncs atomic.Uint64
	// commitTimes is how long each group's write and fdatasync took.
	commitTimes *commitTimes

	kick   chan struct{} // capacity 1: "there is something to write"
	exited chan struct{} // closed when the syncer returns

	prepared  chan *os.File  // capacity 1: the next segment, zero-filled (nil: its filling failed)
	preparing sync.WaitGroup // the goroutine filling it
	// filling is set while a preparer runs (syncer only): at most one
	// fills preparedName, or two would zero the same file, one of them
	// the segment the other's was renamed to.
	filling bool

	// Owned by the syncer goroutine.
	ds       *dataSyncer // its fdatasync, waited for in the poller where it can be
	f        *os.File
	segSize  int64
	segPath  string   // f's path (f.Name() is next.prepared's for a renamed one)
	segments []uint64 // first index of each segment still on disk, ascending
	spare    []byte
	dirty    bool // bytes past segSize in f belong to a failed write
}

// openJournal starts a new segment at index next and the syncer. Older
// segments listed in old are kept until tessera has integrated them.
func openJournal(dir string, segMax int64, next uint64, old []uint64, durable func(uint64, [][]byte), integrated func() uint64, fault func(string, int64) error, retry time.Duration) (*journal, error) {
	if retry <= 0 {
		retry = time.Second
	}
	j := &journal{
		fault:       fault,
		retry:       retry,
		dir:         dir,
		segMax:      segMax,
		durable:     durable,
		integrated:  integrated,
		next:        next,
		cur:         &commit{done: make(chan struct{}), first: next},
		kick:        make(chan struct{}, 1),
		exited:      make(chan struct{}),
		prepared:    make(chan *os.File, 1),
		segments:    slices.Clone(old),
		ds:          newDataSyncer(),
		commitTimes: newCommitTimes(),
	}
	if err := j.newSegment(next); err != nil {
		j.ds.close()
		return nil, err
	}
	go j.syncLoop()
	return j, nil
}

func segmentName(first uint64) string { return fmt.Sprintf("%016x%s", first, segmentSuffix) }

// newSegment is called by the syncer (or before it starts). The segment
// is filled with zeros and synced before use, so that the fdatasync after
// each group only flushes data blocks: an append that grew the file would
// also need a filesystem journal commit, which on ext4 waits for every
// other file's metadata (tessera's renames) and multiplies the latency.
// Recovery reads the zeros as the end of the records.
//
// Filling a segment takes long (tens of MB, then fsync), so the next one
// is prepared in the background under preparedName while the current one
// fills; rotation then costs a rename.
func (j *journal) newSegment(first uint64) error {
	p := filepath.Join(j.dir, segmentName(first))
	var f *os.File
	if j.filling {
		select {
		case f = <-j.prepared:
			j.filling = false
		default: // still filling: this segment is filled here, below
		}
	}
	if f != nil {
		if err := os.Rename(filepath.Join(j.dir, preparedName), p); err != nil {
			f.Close()
			f = nil
		}
	}
	if f == nil {
		var err error
		if f, err = j.zeroFile(p, j.ds); err != nil {
			return err
		}
	}
	if err := durable.SyncDir(j.dir); err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if j.f != nil {
		j.f.Close()
	}
	j.f, j.segSize, j.segPath = f, 0, p
	if n := len(j.segments); n == 0 || j.segments[n-1] != first {
		j.segments = append(j.segments, first)
	}
	if !j.filling {
		j.filling = true
		j.preparing.Add(1)
		go func() {
			defer j.preparing.Done()
			ds := newDataSyncer()                                      // its own: the syncer's has one request in flight at a time
			f, _ := j.zeroFile(filepath.Join(j.dir, preparedName), ds) // nil on failure: the next rotation fills its own
			ds.close()
			j.prepared <- f
		}()
	}
	return nil
}

// preparedName is the next segment while it is being zero-filled. It does
// not end in segmentSuffix, so recovery ignores it.
const preparedName = "next.prepared"

// zeroFill is the piece zeroFile writes at a time. Each write is a
// syscall that holds the goroutine's P (a quarter of a millisecond or so
// for this much); zeroFile yields between pieces, so that with one P
// (GOMAXPROCS=1) the requests runnable meanwhile wait for one piece, not
// for the whole segment (32 writes of 1 MiB back to back held it for
// 10-15 ms: TestZeroFileYields).
const zeroFill = 256 << 10

// zeroFile creates p filled with segMax zero bytes, made durable through
// ds (with one P, an fdatasync waited for in the poller rather than tens
// of milliseconds of blocking syscall holding the P while a segment's
// worth of data reaches the disk). If it fails, p is removed: a
// half-filled file would only hold on to the space a full disk lacks.
func (j *journal) zeroFile(p string, ds *dataSyncer) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(p)
		return nil, fmt.Errorf("journal: preallocating segment %s (%d bytes, ledger.segment_bytes): %w", p, j.segMax, err)
	}
	zeros := make([]byte, zeroFill)
	for off := int64(0); off < j.segMax; off += int64(len(zeros)) {
		if err := j.faultAt(p, off); err != nil {
			return fail(err)
		}
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), j.segMax-off)], off); err != nil {
			return fail(err)
		}
		runtime.Gosched()
	}
	// fdatasync: the data and the size and block map needed to read it
	// back, which is what a segment's later fdatasyncs rely on; the
	// directory entry is synced by the caller (newSegment).
	if err := ds.sync(f); err != nil {
		return fail(err)
	}
	return f, nil
}

func (j *journal) faultAt(p string, off int64) error {
	if j.fault == nil {
		return nil
	}
	return j.fault(p, off)
}

// JournalSyncs is how many group commits the journal has made durable
// since the log was opened: one fdatasync each, shared by every leaf of
// the group. Its rate against the leaves' is the size of the groups.
func (l *Log) JournalSyncs() uint64 { return l.j.syncs.Load() }

// errJournalClosed is the cause of Appends after Close.
var errJournalClosed = errors.New("ledger is closed")

// append queues leaf under the next index. The caller waits on the
// returned group's done channel before treating the leaf as durable.
// backlog is the most leaves allowed between the journal and the log.
func (j *journal) append(leaf []byte, backlog uint64) (uint64, *commit, error) {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return 0, nil, errJournalClosed
	}
	if j.err != nil {
		err := j.err
		j.mu.Unlock()
		return 0, nil, err
	}
	if lag := j.next - j.integrated(); backlog > 0 && lag >= backlog {
		j.mu.Unlock()
		return 0, nil, fmt.Errorf("ledger overloaded: %d leaves not yet in the log", lag)
	}
	idx := j.next
	j.next++
	var h [recordHeader]byte
	binary.BigEndian.PutUint32(h[0:], uint32(len(leaf)))
	binary.BigEndian.PutUint64(h[8:], idx)
	crc := crc32.Update(crc32.Update(0, crcTable, h[8:]), crcTable, leaf)
	binary.BigEndian.PutUint32(h[4:], crc)
	j.buf = append(append(j.buf, h[:]...), leaf...)
	c := j.cur
	c.leaves = append(c.leaves, leaf)
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default:
	}
	return idx, c, nil
}

func (j *journal) syncLoop() {
	defer close(j.exited)
	for {
		j.mu.Lock()
		for len(j.buf) == 0 && j.err == nil {
			if j.closed {
				j.mu.Unlock()
				return
			}
			j.mu.Unlock()
			<-j.kick
			j.mu.Lock()
		}
		if j.err != nil {
			closed, next := j.closed, j.next
			j.mu.Unlock()
			if closed {
				return
			}
			if err := j.recover(next); err != nil {
				select {
				case <-j.kick:
				case <-time.After(j.retry):
				}
				continue
			}
			j.mu.Lock()
			j.err = nil
			j.mu.Unlock()
			continue
		}
		b, c := j.buf, j.cur
		j.buf = j.spare[:0]
		j.cur = &commit{done: make(chan struct{}), first: j.next}
		j.mu.Unlock()

		var err error
		if j.segSize+int64(len(b)) > j.segMax {
			err = j.rotate(c.first)
		}
		if err == nil {
			err = j.write(b)
		}
		j.spare = b
		if err != nil {
			j.fail(c, err)
			continue
		}
		j.durable(c.first, c.leaves)
		close(c.done)
	}
}

// fail fails group c, which the syncer could not make durable, and every
// Append queued behind it: their indices are given out again once the
// journal has recovered, so that the log stays contiguous. Until then
// Appends fail with err.
func (j *journal) fail(c *commit, err error) {
	j.mu.Lock()
	j.err = err
	j.next = c.first
	queued := j.cur
	j.buf = j.buf[:0]
	j.cur = &commit{done: make(chan struct{}), first: c.first}
	j.mu.Unlock()
	c.err = err
	close(c.done)
	queued.err = err
	close(queued.done)
}

// recover is the syncer's way back from a failed write: the bytes of the
// failed group are cut off the current segment (they must not sit in
// front of later records, which would make the segment corrupt) and a new
// segment starts at next. It fails as long as the disk is full.
func (j *journal) recover(next uint64) error {
	if j.dirty {
		if err := j.f.Truncate(j.segSize); err != nil {
			return fmt.Errorf("journal: cutting a failed write: %w", err)
		}
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal: cutting a failed write: %w", err)
		}
		j.dirty = false
	}
	return j.rotate(next)
}

// write makes b durable in the current segment.
func (j *journal) write(b []byte) error {
	began := time.Now()
	defer func() { j.commitTimes.observe(time.Since(began)) }()
	err := j.faultAt(j.segPath, j.segSize)
	if err == nil {
		_, err = j.f.WriteAt(b, j.segSize)
	}
	if err != nil {
		j.dirty = true
		return fmt.Errorf("journal write: %w", err)
	}
	if err := j.ds.sync(j.f); err != nil {
		j.dirty = true
		return fmt.Errorf("journal fsync: %w", err)
	}
	j.syncs.Add(1)
	j.segSize += int64(len(b))
	return nil
}

// rotate starts a segment at next and removes segments tessera holds.
func (j *journal) rotate(next uint64) error {
	if err := j.newSegment(next); err != nil {
		return err
	}
	j.removeIntegrated()
	return nil
}

// removeIntegrated deletes every segment whose records all precede the
// log's integrated size. The last segment is never removed.
func (j *journal) removeIntegrated() {
	size := j.integrated()
	keep := j.segments[:0]
	for i, s := range j.segments {
		if i+1 < len(j.segments) && j.segments[i+1] <= size {
			os.Remove(filepath.Join(j.dir, segmentName(s)))
			continue
		}
		keep = append(keep, s)
	}
	j.segments = keep
	durable.SyncDir(j.dir)
}

// close stops new Appends, waits for the syncer to write what is queued,
// and closes the segment.
func (j *journal) close() error {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default:
	}
	<-j.exited
	j.ds.close()
	j.removeIntegrated()
	j.preparing.Wait()
	select {
	case f := <-j.prepared:
		if f != nil {
			f.Close()
		}
	default:
	}
	return j.f.Close()
}

// journalRecord is one record read back by readJournal.
type journalRecord struct {
	index uint64
	leaf  []byte
}

// readJournal reads every record of every segment in dir, in order. The
// records of a segment end where its zero fill begins. A torn tail (see
// Damage.Torn: cutting it loses nothing, e.g. the write a crash
// interrupted at the end of the last segment) is cut off and returned for
// the caller to log. Any other bad record is a *CorruptJournalError;
// indices that are not contiguous are an error too.
func readJournal(dir string) ([]journalRecord, []uint64, *Damage, error) {
	recs, segs, d, err := scanJournal(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if d == nil {
		return recs, segs, nil, nil
	}
	if !d.Torn {
		return nil, nil, nil, &CorruptJournalError{*d}
	}
	if err := truncate(d.Segment, d.Offset); err != nil {
		return nil, nil, nil, err
	}
	return recs, segs, d, nil
}

// scanJournalForOpen is readJournal without the cut: a torn tail is
// returned, not cut, so that Open cuts it only once its start checks pass.
func scanJournalForOpen(dir string) ([]journalRecord, []uint64, *Damage, error) {
	recs, segs, d, err := scanJournal(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if d != nil && !d.Torn {
		return nil, nil, nil, &CorruptJournalError{*d}
	}
	return recs, segs, d, nil
}

// scanJournal is readJournal without changing anything: it returns the
// records before the first bad one and describes that one (nil if none).
func scanJournal(dir string) ([]journalRecord, []uint64, *Damage, error) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("journal: %w", err)
	}
	var segs []uint64
	for _, e := range names {
		n := e.Name()
		if !strings.HasSuffix(n, segmentSuffix) {
			continue
		}
		first, err := strconv.ParseUint(strings.TrimSuffix(n, segmentSuffix), 16, 64)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("journal: unexpected file %s", n)
		}
		segs = append(segs, first)
	}
	slices.Sort(segs)
	var recs []journalRecord
	var cut *Damage // the first harmless tail found
	for si, first := range segs {
		p := filepath.Join(dir, segmentName(first))
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("journal: %w", err)
		}
		var off int
		var bad bool
		before := len(recs)
		recs, off, bad = findDamage(data, first, recs)
		if !bad {
			continue
		}
		d := &Damage{Segment: p, Offset: int64(off), Index: first + uint64(len(recs)-before)}
		d.After = salvage(data, off+1, first)
		// Nothing intact follows in this segment, and the next segment (if
		// any) starts with the very record this one lacks: cutting here
		// loses nothing. In the last segment that is a write a crash
		// interrupted; in an earlier one, stray bytes in its unused end.
		if len(d.After) == 0 && (si+1 == len(segs) || segs[si+1] == d.Index) {
			d.Torn = true
			if cut == nil {
				cut = d
			}
			continue
		}
		for _, later := range segs[si+1:] {
			ld, err := os.ReadFile(filepath.Join(dir, segmentName(later)))
			if err != nil {
				return nil, nil, nil, fmt.Errorf("journal: %w", err)
			}
			d.After = append(d.After, salvage(ld, 0, later)...)
		}
		return recs, segs, d, checkContiguous(recs)
	}
	return recs, segs, cut, checkContiguous(recs)
}

func checkContiguous(recs []journalRecord) error {
	for i := 1; i < len(recs); i++ {
		if recs[i].index != recs[i-1].index+1 {
			return fmt.Errorf("journal: gap between index %d and %d", recs[i-1].index, recs[i].index)
		}
	}
	return nil
}

// parseRecord decodes the record at the start of b.
func parseRecord(b []byte) (leaf []byte, idx uint64, n int, ok bool) {
	if len(b) < recordHeader {
		return nil, 0, 0, false
	}
	l := int(binary.BigEndian.Uint32(b[0:]))
	if l > verify.MaxLeafSize || len(b) < recordHeader+l {
		return nil, 0, 0, false
	}
	crc := binary.BigEndian.Uint32(b[4:])
	idx = binary.BigEndian.Uint64(b[8:])
	leaf = b[recordHeader : recordHeader+l]
	if crc32.Update(crc32.Update(0, crcTable, b[8:16]), crcTable, leaf) != crc {
		return nil, 0, 0, false
	}
	return leaf, idx, recordHeader + l, true
}

func truncate(p string, size int64) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return f.Sync()
}
