package tokenize

// hfScratch is the reusable memory of HFTokenizer.pieceCount.
type hfScratch struct {
	sym        []uint32 // token id of the symbol that starts at each byte
	prev, next []int32
	dead       []bool
	heap       []hfMerge
}

// hfMerge is a queued merge, ordered as the tokenizers library orders its
// BinaryHeap: lowest rank, then lowest position.
type hfMerge struct {
	key   uint64 // rank<<32 | pos
	newID uint32
}

// pieceCount is the tokenizers library's Word::merge_all, counting the
// symbols left. A queued merge is stale, and skipped, when its symbol is
// gone, is last, or now pairs with a neighbour into another token.
func (t *HFTokenizer) pieceCount(piece string, sc *hfScratch) int {
	n := len(piece)
	switch {
	case n <= 1:
		return n
	case t.ignoreMerges:
		if _, ok := t.whole[piece]; ok {
			return 1
		}
	}
	if cap(sc.sym) < n {
		sc.sym = make([]uint32, n)
		sc.prev = make([]int32, n)
		sc.next = make([]int32, n)
		sc.dead = make([]bool, n)
	}
	sym, prev, next, dead := sc.sym[:n], sc.prev[:n], sc.next[:n], sc.dead[:n]
	h := sc.heap[:0]
	for i := 0; i < n; i++ {
		sym[i] = t.byteID[piece[i]]
		prev[i], next[i], dead[i] = int32(i-1), int32(i+1), false
	}
	next[n-1] = -1
	for i := 0; i+1 < n; i++ {
		if m, ok := t.merges[uint64(sym[i])<<32|uint64(sym[i+1])]; ok {
			h = append(h, hfMerge{key: m&^0xFFFFFFFF | uint64(i), newID: uint32(m)})
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		hfDown(h, i)
	}
	count := n
	for len(h) > 0 {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		hfDown(h, 0)
		pos := int32(uint32(top.key))
		if dead[pos] || next[pos] < 0 {
			continue
		}
		right := next[pos]
		if m, ok := t.merges[uint64(sym[pos])<<32|uint64(sym[right])]; !ok || uint32(m) != top.newID {
			continue
		}
		sym[pos] = top.newID
		dead[right] = true
		next[pos] = next[right]
		if nx := next[right]; nx >= 0 {
			prev[nx] = pos
		}
		count--
		if p := prev[pos]; p >= 0 {
			if m, ok := t.merges[uint64(sym[p])<<32|uint64(sym[pos])]; ok {
				h = hfPush(h, hfMerge{key: m&^0xFFFFFFFF | uint64(p), newID: uint32(m)})
			}
		}
		if nx := next[pos]; nx >= 0 {
			if m, ok := t.merges[uint64(sym[pos])<<32|uint64(sym[nx])]; ok {
				h = hfPush(h, hfMerge{key: m&^0xFFFFFFFF | uint64(pos), newID: uint32(m)})
			}
		}
	}
	sc.heap = h
	return count
}

func hfPush(h []hfMerge, m hfMerge) []hfMerge {
	h = append(h, m)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].key <= h[i].key {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func hfDown(h []hfMerge, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].key < h[l].key {
			m = r
		}
		if h[i].key <= h[m].key {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
