package check

// claimTable is one replay shard's claims, unlocked (replayShard holds
// the lock): a ring of entries in insertion order, the oldest overwritten
// once max are held, and an open-addressing index of ring slots (linear
// probing, at most half full, backward-shift deletion). A claim costs 32
// bytes of ring and 8 of index, and nothing in either is a pointer, so
// the garbage collector never walks them. (A Go map from key to slot
// beside the ring cost about 50 bytes a claim.)
//
// Both are reserved for max claims at once, outside Go's heap (offHeap):
// the ring's pages become resident as claims fill it, and neither counts
// towards the collector's heap goal, which a full table in the heap
// doubled (20 MB of claims at the default bound made the process 40 MB
// larger). No growth copies either.
type claimTable struct {
	ring  []claimEntry // len max; the first n hold claims
	slots []uint32     // ring slot + 1 of the claim whose key hashes here; 0 empty
	mask  uint64
	n     int // claims held
	head  int // the ring slot overwritten next once full
	max   int
	free  func() // returns ring and slots
}

type claimEntry struct {
	key   uint64
	meta  uint64   // unix milliseconds of the first delivery << 2 | the owner's kind
	owner [16]byte // who it was delivered to (see Replay.owner)
}

func newClaimTable(max int) claimTable {
	slots := 64
	for slots < 2*max {
		slots *= 2
	}
	t := claimTable{mask: uint64(slots - 1), max: max}
	var freeRing, freeSlots func()
	t.ring, freeRing = offHeap[claimEntry](max)
	t.slots, freeSlots = offHeap[uint32](slots)
	t.free = func() { freeRing(); freeSlots() }
	return t
}

// place indexes the claim in ring slot slot.
func (t *claimTable) place(slot int) {
	i := t.ring[slot].key & t.mask
	for t.slots[i] != 0 {
		i = (i + 1) & t.mask
	}
	t.slots[i] = uint32(slot + 1)
}

// find returns the entry of key, or nil.
func (t *claimTable) find(key uint64) *claimEntry {
	for i := key & t.mask; t.slots[i] != 0; i = (i + 1) & t.mask {
		if e := &t.ring[t.slots[i]-1]; e.key == key {
			return e
		}
	}
	return nil
}

// add stores a claim of a key not held, forgetting the oldest if full.
func (t *claimTable) add(e claimEntry) {
	var slot int
	if t.n < t.max {
		slot = t.n
		t.n++
	} else {
		slot = t.head
		t.remove(t.ring[slot].key)
		t.head = (t.head + 1) % t.max
	}
	t.ring[slot] = e
	t.place(slot)
}

// remove deletes key from the index, shifting back the entries of its
// probe run so that every entry stays reachable from its home slot.
func (t *claimTable) remove(key uint64) {
	i := key & t.mask
	for ; t.slots[i] != 0; i = (i + 1) & t.mask {
		if t.ring[t.slots[i]-1].key == key {
			break
		}
	}
	if t.slots[i] == 0 {
		return
	}
	for j := i; ; {
		t.slots[i] = 0
		for {
			j = (j + 1) & t.mask
			if t.slots[j] == 0 {
				return
			}
			home := t.ring[t.slots[j]-1].key & t.mask
			// The entry at j stays unless its home lies cyclically
			// outside (i, j]: then it moves back into the hole at i.
			if (i <= j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
				t.slots[i] = t.slots[j]
				i = j
				break
			}
		}
	}
}

// len is the number of claims held.
func (t *claimTable) len() int { return t.n }
