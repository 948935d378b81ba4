package sim

import (
	"container/list"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The prefix cache: what lets a serving stack skip the prefill of a prompt
// prefix it has already computed, and what leaks between tenants when it
// is shared (docs/checks.md, cache; fault shared-cache).
//
// Its unit is the toy model's token (a word of the rendered prompt, as the
// KV pages hold them) and its block is a KV page, Config.PageTokens words.
// Block j of a prompt is keyed by a hash chained over the request's
// cache_salt and blocks 0..j, so a block is found only after the same salt
// and the same words from the very start of the prompt, as in vLLM's
// prefix caching (whose cache_salt enters the first block's hash). A
// lookup returns the number of leading blocks cached, never all of the
// prompt: the last word is always computed (as vLLM recomputes the last
// token of a fully cached prompt), so a prompt of exactly n blocks can hit
// at most n-1.
//
// usage.prompt_tokens_details.cached_tokens reports the cached words in
// the billed unit: the counter's count of the rendered prompt up to the
// end of the last cached block. It is aligned to a block boundary of the
// toy model (not a multiple of 16 o200k tokens) and never above
// prompt_tokens.

// defaultCacheBlocks bounds the prefix cache when Config.CacheBlocks is 0.
const defaultCacheBlocks = 65536

// prefixCache is a bounded LRU set of block-chain hashes shared by all
// requests of a Server. Safe for concurrent use.
type prefixCache struct {
	block int // words per block
	max   int // blocks held

	mu    sync.Mutex
	lru   *list.List               // of uint64, most recent first; guarded by mu
	index map[uint64]*list.Element // guarded by mu
}

func newPrefixCache(block, max int) *prefixCache {
	return &prefixCache{block: block, max: max, lru: list.New(), index: map[uint64]*list.Element{}}
}

// chain returns the chained hashes of the full blocks of words under salt,
// leaving out a final block that would hold the prompt's last word.
func (c *prefixCache) chain(salt string, words []string) []uint64 {
	n := (len(words) - 1) / c.block
	if len(words) == 0 || n <= 0 {
		return nil
	}
	out := make([]uint64, n)
	h := mix(strHash(salt), 0x5a17)
	for j := range n {
		h = mix(h, digest(words[j*c.block:(j+1)*c.block]))
		out[j] = h
	}
	return out
}

// lookup returns how many leading blocks of chain are cached, refreshing
// them as recently used.
func (c *prefixCache) lookup(chain []uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, h := range chain {
		e, ok := c.index[h]
		if !ok {
			break
		}
		c.lru.MoveToFront(e)
		n++
	}
	return n
}

// insert caches every block of chain, evicting the least recently used
// blocks beyond the bound. An evicted block makes its successors
// unreachable; they age out in turn.
func (c *prefixCache) insert(chain []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range chain {
		if e, ok := c.index[h]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.index[h] = c.lru.PushFront(h)
	}
	for c.lru.Len() > c.max {
		e := c.lru.Back()
		delete(c.index, e.Value.(uint64))
		c.lru.Remove(e)
	}
}

// cacheUse is what the prefix cache did for one prompt.
type cacheUse struct {
	reported int // cached_tokens, in the billed unit
	warm     int // billed tokens whose prefill was skipped (the timing)
}

// use looks the rendered prompt up under salt and caches it. Under
// shared-cache the salt is ignored for both the lookup and the insert;
// under shared-cache-timing the honest, salted lookup is what usage
// reports while the prefill time is that of an unsalted lookup.
func (c *prefixCache) use(fs faultSet, salt, rendered string, words []string, count func(string) int) cacheUse {
	if fs[FaultSharedCache] {
		salt = ""
	}
	own := c.chain(salt, words)
	hit := c.lookup(own)
	c.insert(own)
	timing := hit
	if fs[FaultSharedCacheTiming] && salt != "" {
		shared := c.chain("", words)
		timing = max(hit, c.lookup(shared))
		c.insert(shared)
	}
	var u cacheUse
	if hit > 0 {
		u.reported = count(rendered[:wordsEnd(rendered, hit*c.block)])
	}
	u.warm = u.reported
	if timing != hit {
		u.warm = count(rendered[:wordsEnd(rendered, timing*c.block)])
	}
	return u
}

// wordsEnd is the byte offset in text just past its n-th word (as
// strings.Fields splits it).
func wordsEnd(text string, n int) int {
	if n <= 0 {
		return 0
	}
	in := false
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		space := unicode.IsSpace(r)
		if in && space {
			if n--; n == 0 {
				return i
			}
		}
		in = !space
		i += size
	}
	return len(text)
}
