package tokenize

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// rankTable maps a token's bytes to its BPE rank, which is also its id in
// tiktoken's encodings. It is built once per encoding and never written
// after, so any number of counters share it.
//
// It is an open-addressing hash table rather than a Go map because a rank
// lookup is most of the cost of counting, and most lookups miss the CPU
// caches: each slot is one uint64 that holds the token's offset and length
// in one contiguous arena, its rank, and a fingerprint of its hash, so a
// lookup reads one slot and, only when the fingerprint matches, the bytes.
type rankTable struct {
	slots []uint64 // fingerprint<<50 | rank<<30 | length<<22 | offset; 0 is empty
	mask  uint64
	arena string // every token's bytes, end to end
	seed  maphash.Seed
	count int
}

const (
	maxArena     = 1 << 22
	maxTokenLen  = 1<<8 - 1
	maxRank      = 1<<20 - 1
	fingerprints = 14 // bits
)

func newRankTable(arena string, offs []uint32, ranks []uint32) (*rankTable, error) {
	if len(arena) >= maxArena {
		return nil, fmt.Errorf("rank table of %d bytes is too large", len(arena))
	}
	size := 1
	for size < 2*len(ranks) {
		size <<= 1
	}
	t := &rankTable{slots: make([]uint64, size), mask: uint64(size - 1), arena: arena, seed: maphash.MakeSeed(), count: len(ranks)}
	for i, r := range ranks {
		start, end := offs[i], uint32(len(arena))
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		n := end - start
		switch {
		case n == 0 || n > maxTokenLen:
			return nil, fmt.Errorf("token %d is %d bytes long", r, n)
		case r > maxRank:
			return nil, fmt.Errorf("rank %d is too large", r)
		case t.rank(arena[start:end]) != noRank:
			return nil, fmt.Errorf("token %d is a duplicate", r)
		}
		h := maphash.String(t.seed, arena[start:end])
		j := h & t.mask
		for t.slots[j] != 0 {
			j = (j + 1) & t.mask
		}
		t.slots[j] = h>>(64-fingerprints)<<50 | uint64(r)<<30 | uint64(n)<<22 | uint64(start)
	}
	return t, nil
}

// rank returns the rank of the token b, or noRank.
func (t *rankTable) rank(b string) uint32 {
	if len(b) > maxTokenLen {
		return noRank
	}
	h := maphash.String(t.seed, b)
	fp := h >> (64 - fingerprints)
	want := fp<<8 | uint64(len(b)) // fingerprint and length, as in a slot
	for j := h & t.mask; ; j = (j + 1) & t.mask {
		s := t.slots[j]
		if s == 0 {
			return noRank
		}
		if s>>50<<8|(s>>22&0xFF) == want {
			off := s & (1<<22 - 1)
			if t.arena[off:off+uint64(len(b))] == b {
				return uint32(s >> 30 & maxRank)
			}
		}
	}
}

// each calls f for every token, in no order.
func (t *rankTable) each(f func(tok string, rank uint32)) {
	for _, s := range t.slots {
		if s != 0 {
			off, n := s&(1<<22-1), s>>22&0xFF
			f(t.arena[off:off+n], uint32(s>>30&maxRank))
		}
	}
}

// lazyRanks parses one embedded .tiktoken file on first use.
type lazyRanks struct {
	file  string
	once  sync.Once
	ranks *rankTable
	err   error
}

func (l *lazyRanks) get() (*rankTable, error) {
	l.once.Do(func() {
		data, err := assets.Assets.ReadFile(l.file)
		if err != nil {
			l.err = fmt.Errorf("reading embedded %s: %w", l.file, err)
			return
		}
		l.ranks, l.err = parseTiktoken(data)
		if l.err != nil {
			l.err = fmt.Errorf("parsing embedded %s: %w", l.file, l.err)
		}
	})
	return l.ranks, l.err
}

// parseTiktoken reads the .tiktoken format: one "base64(token) rank" a line.
func parseTiktoken(data []byte) (*rankTable, error) {
	lines := bytes.Count(data, []byte{'\n'}) + 1
	var arena strings.Builder
	arena.Grow(len(data) * 3 / 4 / 2)
	offs, ranks := make([]uint32, 0, lines), make([]uint32, 0, lines)
	buf := make([]byte, 0, 256)
	for lineNo := 1; len(data) > 0; lineNo++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("line %d: no rank", lineNo)
		}
		n := base64.StdEncoding.DecodedLen(sp)
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		m, err := base64.StdEncoding.Decode(buf[:n], line[:sp])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		rank, err := strconv.ParseUint(string(line[sp+1:]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		offs = append(offs, uint32(arena.Len()))
		ranks = append(ranks, uint32(rank))
		arena.Write(buf[:m])
	}
	return newRankTable(arena.String(), offs, ranks)
}
