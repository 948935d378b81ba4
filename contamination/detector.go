package contamination

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// Detector remembers the fingerprints of recent prompts and the registered
// canary secrets, and makes Scanners that look for both in responses. It is
// safe for concurrent use.
//
// Memory: a remembered prompt costs its slot (about 80 bytes plus its request
// id and tenant) and about 26 bytes per kept fingerprint (8 in the slot, the
// rest its entry in the fingerprint map; BenchmarkMemory measures it). A
// prompt of n words keeps about 2n/3 fingerprints, at most
// MaxPrintsPerPrompt, and all prompts together at most MaxPrints: at the
// defaults at most about 27 MiB for fingerprints, 4 MiB for the generic-
// phrase sketch, 256 KiB for the built-in stock phrases, and
// MaxPrompts slots. The corpus of corpus_test.go (prompts
// of about 60 words) costs about 1 KB per remembered prompt.
type Detector struct {
	cfg    Config
	k0, k1 uint64 // SipHash key, from crypto/rand; never leaves the process

	mu    sync.RWMutex        // guards everything below
	fps   map[uint64]uint64   // fingerprint -> count<<32 | first known slot+1
	more  map[uint64][]uint32 // fingerprint -> further known slots
	slots []slot              // ring of remembered prompts
	head  int                 // index of the oldest slot
	live  int                 // slots in use, from head
	total int                 // fingerprints held by live slots
	seq   uint64              // last sequence number given

	common *common    // generic phrases of responses; nil when CommonAfter < 0
	stock  stockTable // built-in stock phrases, keyed; nil with NoStockPhrases

	secretMu sync.Mutex // serialises secret changes
	secrets  map[string]secretEntry
	ac       atomic.Pointer[automaton]
}

// slot is one remembered prompt.
type slot struct {
	seq     uint64 // distinguishes reuses of the slot; 0 = empty
	id      string
	tenant  string
	prints  []uint64
	expires time.Time
}

// New returns a Detector with a fresh random key. Zero Config fields take
// their defaults (see Config).
func New(cfg Config) *Detector {
	cfg = cfg.withDefaults()
	var key [16]byte
	// crypto/rand.Read never returns an error (Go 1.24+) and crashes the
	// program irrecoverably if the system source fails.
	_, _ = rand.Read(key[:])
	d := &Detector{
		cfg:     cfg,
		k0:      binary.LittleEndian.Uint64(key[:8]),
		k1:      binary.LittleEndian.Uint64(key[8:]),
		fps:     make(map[uint64]uint64),
		more:    make(map[uint64][]uint32),
		slots:   make([]slot, cfg.MaxPrompts),
		secrets: make(map[string]secretEntry),
	}
	if cfg.CommonAfter > 0 {
		d.common = newCommon()
	}
	if !cfg.NoStockPhrases {
		d.stock = newStock(cfg.K, d.k0, d.k1)
	}
	d.ac.Store(buildAutomaton(nil))
	return d
}

// Remember adds the fingerprints of an admitted request's prompt, forgetting
// the oldest prompts as needed by count, age and total size. Responses to
// other requests that carry them are then contaminated. p is not retained.
func (d *Detector) Remember(requestID, tenant string, p *Prints) {
	now := d.cfg.Now()
	sel := []uint64(nil)
	if p != nil {
		sel = append([]uint64(nil), p.sel...)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expireLocked(now)
	for d.live > 0 && (d.live == len(d.slots) || d.total+len(sel) > d.cfg.MaxPrints) {
		d.evictOldestLocked()
	}
	if len(sel) > d.cfg.MaxPrints {
		sel = sel[:d.cfg.MaxPrints]
	}
	i := (d.head + d.live) % len(d.slots)
	d.live++
	d.seq++
	d.slots[i] = slot{seq: d.seq, id: requestID, tenant: tenant, prints: sel, expires: now.Add(d.cfg.TTL)}
	d.total += len(sel)
	for _, fp := range sel {
		d.addLocked(fp, uint32(i))
	}
}

// Forget drops everything remembered for prompts older than the TTL. Remember
// does this too; Forget lets an idle gateway give the memory back.
func (d *Detector) Forget() {
	now := d.cfg.Now()
	d.mu.Lock()
	d.expireLocked(now)
	d.mu.Unlock()
}

// Remembered reports how many prompts and fingerprints are remembered.
func (d *Detector) Remembered() (prompts, prints int) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.live, d.total
}

func (d *Detector) expireLocked(now time.Time) {
	for d.live > 0 && !now.Before(d.slots[d.head].expires) {
		d.evictOldestLocked()
	}
}

func (d *Detector) evictOldestLocked() {
	s := &d.slots[d.head]
	for _, fp := range s.prints {
		d.removeLocked(fp, uint32(d.head))
	}
	d.total -= len(s.prints)
	*s = slot{}
	d.head = (d.head + 1) % len(d.slots)
	d.live--
}

// The fingerprint map packs, for each fingerprint, how many live prompts hold
// it (high 32 bits) and the first of the slots known to hold it, plus one
// (low 32 bits; 0 = none). Further known slots are in more. At most
// MaxSharedBy slots are known; a fingerprint whose count exceeds its known
// slots has sources that cannot be named, and is treated as popular.

func (d *Detector) addLocked(fp uint64, s uint32) {
	v := d.fps[fp]
	count, first := v>>32, uint32(v)
	known := len(d.more[fp])
	if first != 0 {
		known++
	}
	if known < d.cfg.MaxSharedBy {
		if first == 0 {
			first = s + 1
		} else {
			d.more[fp] = append(d.more[fp], s)
		}
	}
	d.fps[fp] = (count+1)<<32 | uint64(first)
}

func (d *Detector) removeLocked(fp uint64, s uint32) {
	v, ok := d.fps[fp]
	if !ok {
		return
	}
	count, first := v>>32-1, uint32(v)
	if count == 0 {
		delete(d.fps, fp)
		delete(d.more, fp)
		return
	}
	others := d.more[fp]
	if first == s+1 {
		first = 0
		if len(others) > 0 {
			first = others[len(others)-1] + 1
			others = others[:len(others)-1]
		}
	} else {
		for i, o := range others {
			if o == s {
				others[i] = others[len(others)-1]
				others = others[:len(others)-1]
				break
			}
		}
	}
	if len(others) == 0 {
		delete(d.more, fp)
	} else {
		d.more[fp] = others
	}
	d.fps[fp] = count<<32 | uint64(first)
}

// source names one remembered prompt; seq detects reuse of the slot.
type source struct {
	slot uint32
	seq  uint64
}

// lookupLocked appends to dst the live sources of fp other than the request
// excluded. popular reports a fingerprint held by more than MaxSharedBy
// prompts, or by prompts it cannot name. Callers hold d.mu for reading.
func (d *Detector) lookupLocked(fp uint64, exclude string, now time.Time, dst []source) (_ []source, found, popular bool) {
	v, ok := d.fps[fp]
	if !ok {
		return dst, false, false
	}
	count, first := v>>32, uint32(v)
	others := d.more[fp]
	known := uint64(len(others))
	if first != 0 {
		known++
	}
	if count > uint64(d.cfg.MaxSharedBy) || count > known {
		return dst, true, true
	}
	add := func(i uint32) {
		s := &d.slots[i]
		if s.seq == 0 || s.id == exclude || !now.Before(s.expires) {
			return
		}
		dst = append(dst, source{slot: i, seq: s.seq})
	}
	if first != 0 {
		add(first - 1)
	}
	for _, o := range others {
		add(o)
	}
	return dst, true, false
}
