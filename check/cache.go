package check

import (
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/custody-gateway/custody"
)

// CacheHistory bounds what each cache key (a tenant's salt on one
// provider) can have put in an upstream's prompt cache: the prefixes of
// the prompts it sent. It keeps, per key, hashes of each prompt's
// prefixes of 64, 128, 256, … bytes (no text), at most MaxPerKey of them,
// the oldest forgotten first. Safe for concurrent use.
//
// The bound is sound for a cache keyed by custody's salt as long as the
// salts are new at start (custody's are): an engine can then have cached
// for this key only prompts this process sent, and a cached prefix is no
// longer, in tokens, than in bytes. A prompt is remembered when it is
// sent, not when its answer comes: a request in flight beside it may be
// prefilled first and cached, and the answer's bound is taken over every
// other prompt sent until then (Bound with self).
type CacheHistory struct {
	seed maphash.Seed
	mu   sync.Mutex
	keys map[string]*prefixSet // guarded by mu
}

// MaxPerKey bounds the prefix hashes remembered per key (about 800
// prompts of up to 1 MiB each).
const MaxPerKey = 16384

// minPrefix is the shortest prefix remembered, in bytes.
const minPrefix = 64

type prefixSet struct {
	seen    map[uint64]int // prefix hash -> how many prompts sent it
	order   []uint64       // ring of what seen counts, oldest at next
	next    int
	prompts int // prompts remembered, ever
}

// NewCacheHistory returns an empty history.
func NewCacheHistory() *CacheHistory {
	return &CacheHistory{seed: maphash.MakeSeed(), keys: map[string]*prefixSet{}}
}

// prefixes calls f with the hash and length of each remembered prefix
// length of text, shortest first, and text's whole length last.
func (h *CacheHistory) prefixes(text string, f func(sum uint64, n int) bool) {
	for n := minPrefix; ; n *= 2 {
		if n >= len(text) {
			f(maphash.String(h.seed, text), len(text))
			return
		}
		if !f(maphash.String(h.seed, text[:n]), n) {
			return
		}
	}
}

// Bound is the most of text, in bytes, that key can have cached: the
// first remembered prefix length that no other prompt of key sent (the
// shared part is shorter), or all of text; 0 if key sent no other prompt.
// self says that text itself was remembered (once) and does not count.
func (h *CacheHistory) Bound(key, text string, self bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	own := 0
	if self {
		own = 1
	}
	set := h.keys[key]
	if set == nil || set.prompts <= own {
		return 0
	}
	bound := 0
	h.prefixes(text, func(sum uint64, n int) bool {
		bound = n
		return set.seen[sum] > own
	})
	return bound
}

// Remember records that key sent text.
func (h *CacheHistory) Remember(key, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.keys[key]
	if set == nil {
		set = &prefixSet{seen: map[uint64]int{}}
		h.keys[key] = set
	}
	h.prefixes(text, func(sum uint64, _ int) bool {
		if len(set.order) < MaxPerKey {
			set.order = append(set.order, sum)
		} else {
			old := set.order[set.next]
			if set.seen[old]--; set.seen[old] <= 0 {
				delete(set.seen, old)
			}
			set.order[set.next] = sum
			set.next = (set.next + 1) % MaxPerKey
		}
		set.seen[sum]++
		return true
	})
	set.prompts++
}

// CachedTokens fails when an upstream reports more cached prompt tokens
// than the tenant can have cached: bound is the most it can (in tokens,
// allowance included). The prompt cache then served another tenant's
// prefix, whatever the salt said.
func CachedTokens(cached, bound int) error {
	if cached > bound {
		return custody.Errorf(custody.CodeCacheShared,
			"the upstream reported %d cached prompt tokens; this tenant can have cached at most %d", cached, bound)
	}
	return nil
}

// CacheDetail describes a passing cache check.
func CacheDetail(isolation string, cached, bound int) string {
	return fmt.Sprintf("isolation %s: %d cached of at most %d", isolation, cached, bound)
}
