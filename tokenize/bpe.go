package tokenize

import (
	"math"
	"sync"
)

// noRank marks a pair that is not a token.
const noRank = math.MaxUint32

// shortPiece is the longest piece merged with tiktoken's own quadratic
// scan, on the stack. Longer pieces use a heap and a linked list, so that
// 1 MB of one repeated letter is O(n log n), not O(n²).
const shortPiece = 64

// bpeCount returns how many tokens tiktoken's byte-pair merge makes of
// piece, which is not itself a token and is at least 2 bytes long.
func (t *rankTable) bpeCount(piece string, pool *sync.Pool) int {
	if len(piece) <= shortPiece {
		return t.scanCount(piece)
	}
	sc := pool.Get().(*heapScratch)
	n := t.heapCount(piece, sc)
	pool.Put(sc)
	return n
}

// scanCount is tiktoken's byte_pair_merge: parts[k] is the start of the
// k-th part and the rank of the merge of parts k and k+1; repeatedly merge
// the lowest rank, leftmost first.
func (t *rankTable) scanCount(piece string) int {
	var starts [shortPiece + 1]int32
	var ranks [shortPiece + 1]uint32
	n := len(piece) + 1 // parts, the last is the end sentinel
	for k := 0; k < n; k++ {
		starts[k] = int32(k)
		ranks[k] = noRank
	}
	for k := 0; k+2 < n; k++ {
		ranks[k] = t.rank(piece[k : k+2])
	}
	get := func(k int) uint32 {
		if k+3 < n {
			return t.rank(piece[starts[k]:starts[k+3]])
		}
		return noRank
	}
	for {
		min, at := uint32(noRank), -1
		for k := 0; k < n-1; k++ {
			if ranks[k] < min {
				min, at = ranks[k], k
			}
		}
		if at < 0 {
			break
		}
		if at > 0 {
			ranks[at-1] = get(at - 1)
		}
		ranks[at] = get(at)
		copy(starts[at+1:n-1], starts[at+2:n])
		copy(ranks[at+1:n-1], ranks[at+2:n])
		n--
	}
	return n - 1
}

// heapScratch is the reusable memory of heapCount.
type heapScratch struct {
	next, prev []int32  // linked list of part starts, by byte offset
	rank       []uint32 // rank of merging the part at an offset with the next
	heap       []uint64 // rank<<32 | offset, a min-heap
}

func newHeapScratch() any { return new(heapScratch) }

// heapCount gives the same result as scanCount: the heap is ordered by
// (rank, offset), which is lowest rank, leftmost first, and an entry whose
// rank is no longer the part's current rank is stale and skipped.
func (t *rankTable) heapCount(piece string, sc *heapScratch) int {
	n := len(piece)
	sc.next = grow32(sc.next, n+1)
	sc.prev = grow32(sc.prev, n+1)
	if cap(sc.rank) < n+1 {
		sc.rank = make([]uint32, n+1)
	}
	next, prev, rank := sc.next[:n+1], sc.prev[:n+1], sc.rank[:n+1]
	h := sc.heap[:0]
	for k := 0; k <= n; k++ {
		next[k], prev[k], rank[k] = int32(k+1), int32(k-1), noRank
	}
	for k := 0; k+1 < n; k++ {
		if r := t.rank(piece[k : k+2]); r != noRank {
			rank[k] = r
			h = append(h, uint64(r)<<32|uint64(k))
		}
	}
	heapInit(h)
	// pairRank is the rank of the part at k merged with its successor.
	pairRank := func(k int32) uint32 {
		nx := next[k]
		if nx >= int32(n) {
			return noRank
		}
		return t.rank(piece[k:next[nx]])
	}
	parts := n
	for len(h) > 0 {
		top := h[0]
		h = heapPop(h)
		k, r := int32(uint32(top)), uint32(top>>32)
		if rank[k] != r || r == noRank {
			continue // stale
		}
		// Merge k with its successor.
		nx := next[k]
		next[k] = next[nx]
		if next[k] <= int32(n) {
			prev[next[k]] = k
		}
		rank[nx] = noRank
		parts--
		if r := pairRank(k); r != rank[k] {
			rank[k] = r
			if r != noRank {
				h = heapPush(h, uint64(r)<<32|uint64(k))
			}
		}
		if p := prev[k]; p >= 0 {
			if r := pairRank(p); r != rank[p] {
				rank[p] = r
				if r != noRank {
					h = heapPush(h, uint64(r)<<32|uint64(p))
				}
			}
		}
	}
	sc.heap = h
	return parts
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// The heap is 4-ary: half the depth of a binary heap, and the children
// of a node share a cache line, which is what a megabyte-long piece costs.

func heapInit(h []uint64) {
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		heapDown(h, i)
	}
}

func heapPush(h []uint64, v uint64) []uint64 {
	h = append(h, v)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p] <= v {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = v
	return h
}

func heapPop(h []uint64) []uint64 {
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	heapDown(h, 0)
	return h
}

func heapDown(h []uint64, i int) {
	if i >= len(h) {
		return
	}
	v := h[i]
	for {
		c := 4*i + 1
		if c >= len(h) {
			break
		}
		m, mv := c, h[c]
		end := min(c+4, len(h))
		for k := c + 1; k < end; k++ {
			if h[k] < mv {
				m, mv = k, h[k]
			}
		}
		if v <= mv {
			break
		}
		h[i] = mv
		i = m
	}
	h[i] = v
}
