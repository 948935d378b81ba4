package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody/internal/background"
	"github.com/custody-gateway/custody/internal/durable"
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

	prepared  chan *os.File  // capacity 1: the next segment, recycled or zero-filled (nil: that failed)
	preparing sync.WaitGroup // the goroutine preparing it
	fills     atomic.Int64   // zero fills begun (a recycled segment needs none)
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
	unfit    uint64   // 1 + the first index of a segment found unfit to recycle; 0 none
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
	j.prepare(true) // the first segment: what an earlier run prepared, recycled or filled
	if err := j.newSegment(next); err != nil {
		j.ds.close()
		return nil, err
	}
	j.prepare(true)
	go j.syncLoop()
	return j, nil
}

func segmentName(first uint64) string { return fmt.Sprintf("%016x%s", first, segmentSuffix) }

// newSegment is called by the syncer (or before it starts). A segment is
// a file already written to its full size before it is used, so that the
// fdatasync after each group only flushes data blocks: an append that
// grew the file would also need a filesystem journal commit, which on ext4
// waits for every other file's metadata (tessera's renames) and multiplies
// the latency.
//
// The next segment is readied ahead (prepare), so that rotation costs a
// rename; if none is ready, this one is recycled or filled here.
func (j *journal) newSegment(first uint64) error {
	p := filepath.Join(j.dir, segmentName(first))
	var f *os.File
	if j.filling {
		select {
		case f = <-j.prepared:
			j.filling = false
		default: // still being prepared: this segment is readied here, below
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
		if f, err = j.obtain(p, j.ds); err != nil {
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
	return nil
}

// prepare readies the next segment under preparedName, unless one is
// ready or being readied (syncer only, or before it starts). Its file is
// preferably the oldest segment tessera holds entirely, recycled: that
// writes nothing. A zero fill writes a whole segment and syncs it, and
// every commit's fdatasync meanwhile waits behind those writes at the
// disk: a 32 MiB fill beside 1,000 commits a second took their p99 from
// 2-9 ms to 31-42 ms and their slowest to 50-60 ms here
// (BenchmarkCommitsBesideAFill). So the fill is the fallback, started
// only when no segment has come free by the time the current one is half
// full (tessera lagging), or when now is set: Open, before any request
// waits on a commit, readies the first segments there, synchronously (a
// new ledger's two fills; a restarted one reuses what it left).
func (j *journal) prepare(now bool) {
	if j.filling {
		return
	}
	dst := filepath.Join(j.dir, preparedName)
	if now {
		if f := j.reusePrepared(dst); f != nil {
			j.filling = true
			j.prepared <- f
			return
		}
	}
	old, recycle := j.takeIntegrated()
	if !recycle && !now && j.segSize < j.segMax/2 {
		return
	}
	get := func(ds *dataSyncer) *os.File {
		if recycle {
			if f, err := j.recycle(old, dst); err == nil {
				return f
			}
		}
		f, _ := j.zeroFile(dst, ds) // nil on failure: the next rotation readies its own
		return f
	}
	j.filling = true
	if now {
		j.prepared <- get(j.ds) // capacity 1, and empty: nothing was filling
		return
	}
	j.preparing.Add(1)
	go func() {
		defer j.preparing.Done()
		ds := newDataSyncer() // its own: the syncer's has one request in flight at a time
		f := get(ds)
		ds.close()
		j.prepared <- f
	}()
}

// reusePrepared opens the segment an earlier run prepared and did not
// use, if it is whole: zeros, or a recycled segment's older records.
// Synced again, in case that run stopped before its fill's fdatasync.
func (j *journal) reusePrepared(p string) *os.File {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != j.segMax || j.ds.sync(f) != nil {
		f.Close()
		return nil
	}
	return f
}

// obtain makes p a segment: the oldest one tessera holds entirely,
// recycled, or else a zero-filled file.
func (j *journal) obtain(p string, ds *dataSyncer) (*os.File, error) {
	if old, ok := j.takeIntegrated(); ok {
		if f, err := j.recycle(old, p); err == nil {
			return f, nil
		}
	}
	return j.zeroFile(p, ds)
}

// takeIntegrated removes from the segments the oldest one whose records
// tessera has all integrated, and returns its first index, if its file is
// a whole segment. The current segment, the last, is never taken; one
// that is not whole (cut after a failed write, or of another
// segment_bytes) is left for removeIntegrated.
func (j *journal) takeIntegrated() (uint64, bool) {
	if len(j.segments) < 2 || j.segments[1] > j.integrated() {
		return 0, false
	}
	old := j.segments[0]
	if j.unfit == old+1 {
		return 0, false
	}
	if fi, err := os.Stat(filepath.Join(j.dir, segmentName(old))); err != nil || fi.Size() != j.segMax {
		j.unfit = old + 1
		return 0, false
	}
	j.segments = j.segments[1:]
	return old, true
}

// recycle renames the integrated segment old to p and opens it for reuse.
// Its records stay in it until overwritten: all of indices below the new
// segment's first, they read as the end of its records (findDamage), and
// the end mark after each group keeps a shorter new record from leaving
// the rest of an old one to be read as damage. A file shorter than a
// segment (cut after a failed write, or from another segment_bytes) is
// not reused: err, and the caller fills p from scratch. Renames are
// durable once the caller syncs the directory, which it does before the
// first write; until then a crash leaves old where it was, intact.
func (j *journal) recycle(old uint64, p string) (*os.File, error) {
	src := filepath.Join(j.dir, segmentName(old))
	if err := os.Rename(src, p); err != nil {
		os.Remove(src) // integrated: removing it is what removeIntegrated would do
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != j.segMax {
		f.Close()
		return nil, fmt.Errorf("journal: %s is not a whole segment", p)
	}
	return f, nil
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
	j.fills.Add(1)
	zeros := make([]byte, zeroFill)
	for off := int64(0); off < j.segMax; off += int64(len(zeros)) {
		if err := j.faultAt(p, off); err != nil {
			return fail(err)
		}
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), j.segMax-off)], off); err != nil {
			return fail(err)
		}
		background.Yield()
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
		j.prepare(false)
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
	n := int64(len(b))
	if j.segSize+n+recordHeader <= j.segMax {
		var mark [recordHeader]byte // the end of the records, in case the file holds older ones (recycle)
		b = append(b, mark[:]...)
	}
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
	j.segSize += n
	return nil
}

// rotate starts a segment at next and removes segments tessera holds.
func (j *journal) rotate(next uint64) error {
	if err := j.newSegment(next); err != nil {
		return err
	}
	j.prepare(false) // before removeIntegrated, which would remove what it can recycle
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
