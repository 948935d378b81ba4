package canary

import (
	"context"
	crand "crypto/rand"
	"slices"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
)

// The cache probe: does the route's prompt cache keep tenants apart?
//
// Custody salts every forwarded request per tenant (cache_salt), so a
// prefix one tenant sent must never come back warm for another. Two
// synthetic canary tenants, A and B, send long random prefixes, fresh per
// pair so that no earlier run (or other traffic) warms them. Each pair
// takes four requests, the owner (A or B, at random) and the other tenant:
//
//	prime  owner sends P        P is now in the owner's cache
//	cross  other sends P        \ in random order: the request under test
//	cold   other sends Q        / and a cold control (Q: P's words shuffled)
//	self   owner sends P again  the positive control: it must hit
//
// Verdicts, in this order:
//
//  1. a cross request reports more than half of its prompt in
//     usage.prompt_tokens_details.cached_tokens beyond what its cold twin
//     reports: the other tenant's prefix was served from the cache
//     (cache_shared). The tenant never sent those tokens, so no honest
//     cache can report them; the cold twin absorbs what every request of
//     the tenant shares (a template's header).
//  2. the self requests show no hit, neither by cached_tokens (more than
//     half of their prompt beyond the cold twin, in at least half the
//     pairs) nor by time to first byte (a one-sided Mann-Whitney test of
//     self against cold at Alpha): the route caches nothing the probe can
//     see, so a shared cache would go unseen too (inconclusive).
//  3. the cross requests' times to first byte are stochastically smaller
//     than the cold ones' (one-sided exact Mann-Whitney test, p <= Alpha):
//     the cache is shared underneath the accounting and the timing leaks
//     the other tenant's prefix (cache_shared).
//
// Under isolation, cross and cold are both uncached requests of the same
// size from the same tenant in random order, so their times are
// exchangeable and the test's false-alarm rate is at most Alpha whatever
// the route's latency distribution (measured in docs/canaries.md). Q is
// P's words in another order, not a fresh text: word-level caches along
// the path (a BPE tokenizer's, custody's own prompt count) have seen
// Q's words as they have P's, and would otherwise make the cross request
// faster than the cold one on an honest route. Only a prefix cache tells
// them apart: their first block differs.

// ProbeCache is the cache isolation probe's name.
const ProbeCache = "cache"

// codeCacheShared is custody's code for a prompt cache shared between
// tenants: the probe's failures carry it, as custody's per-request check
// does.
const codeCacheShared = string(custody.CodeCacheShared)

// CacheConfig tunes the cache probe. Zero fields take defaults.
type CacheConfig struct {
	// Pairs of cross and cold requests per run; 0 means 16, at most 64
	// (each pair costs four requests).
	Pairs int
	// PrefixTokens is the approximate size of each random prefix; 0 means
	// 384. Large enough for many cache blocks, so that a hit shows in the
	// time to first byte.
	PrefixTokens int
	// Alpha is the false-alarm rate of the timing test; 0 means 0.001.
	Alpha float64
	// Tenants are the two synthetic canary tenants (Target.Chat maps them
	// into custody's internal namespace); zero means "cache-a", "cache-b".
	Tenants [2]string
}

func (c CacheConfig) withDefaults() CacheConfig {
	if c.Pairs == 0 {
		c.Pairs = 16
	}
	if c.PrefixTokens == 0 {
		c.PrefixTokens = 384
	}
	if c.Alpha == 0 {
		c.Alpha = 0.001
	}
	if c.Tenants[0] == "" {
		c.Tenants[0] = "cache-a"
	}
	if c.Tenants[1] == "" {
		c.Tenants[1] = "cache-b"
	}
	return c
}

func (c CacheConfig) valid() bool {
	return c.Pairs >= 2 && c.Pairs <= 64 && c.PrefixTokens >= 32 && c.Alpha > 0 && c.Alpha < 1 && c.Tenants[0] != c.Tenants[1]
}

// cacheObs is what one request of the probe saw.
type cacheObs struct {
	ttfb   time.Duration
	cached int
	prompt int
}

// beyond reports whether o reports more than half its prompt as cached
// beyond what its cold twin reports.
func (o cacheObs) beyond(cold cacheObs) bool {
	return o.cached-cold.cached > o.prompt/2
}

// cacheAsk sends one request of the probe as tenant.
func cacheAsk(ctx context.Context, t Target, tenant, prefix string) (cacheObs, *ProbeResult) {
	start := time.Now()
	res, err := t.Chat(ctx, ChatRequest{
		Messages:    []Message{{Role: "user", Content: prefix}},
		Temperature: zero(),
		MaxTokens:   1,
		Tenant:      tenant,
	})
	elapsed := time.Since(start)
	a, f := judge(ProbeCache, res, err)
	if f != nil {
		if f.transient {
			r := inconclusive(ProbeCache, "%s", f.Evidence)
			return cacheObs{}, &r
		}
		return cacheObs{}, f
	}
	o := cacheObs{ttfb: res.TTFB, cached: a.CachedTokens, prompt: a.PromptTokens}
	if o.ttfb <= 0 {
		o.ttfb = elapsed
	}
	return o, nil
}

// probeCache runs the cache probe on t (see the top of this file).
func (r *Runner) probeCache(ctx context.Context, t Target) ProbeResult {
	cfg := r.cfg.Cache
	var cross, cold, self []cacheObs
	sharedByCount, selfByCount := 0, 0
	for range cfg.Pairs {
		owner := r.coins.intN(2)
		a, b := cfg.Tenants[owner], cfg.Tenants[1-owner]
		p := cachePrefix(cfg.PrefixTokens)
		q := r.coins.shuffled(p)
		if _, f := cacheAsk(ctx, t, a, p); f != nil {
			return *f
		}
		var x, c cacheObs
		var f *ProbeResult
		if r.coins.intN(2) == 0 {
			if x, f = cacheAsk(ctx, t, b, p); f == nil {
				c, f = cacheAsk(ctx, t, b, q)
			}
		} else {
			if c, f = cacheAsk(ctx, t, b, q); f == nil {
				x, f = cacheAsk(ctx, t, b, p)
			}
		}
		if f != nil {
			return *f
		}
		s, f := cacheAsk(ctx, t, a, p)
		if f != nil {
			return *f
		}
		if x.beyond(c) {
			sharedByCount++
		}
		if s.beyond(c) {
			selfByCount++
		}
		cross, cold, self = append(cross, x), append(cold, c), append(self, s)
	}
	n := cfg.Pairs
	if sharedByCount > 0 {
		res := fail(ProbeCache, "%d/%d pairs: the other tenant's prefix reported cached (cached_tokens %d of %d)",
			sharedByCount, n, maxCached(cross), cross[0].prompt)
		res.Code = codeCacheShared
		return res
	}
	ttfbs := func(os []cacheObs) []float64 {
		out := make([]float64, len(os))
		for i, o := range os {
			out[i] = float64(o.ttfb)
		}
		return out
	}
	pSelf := mannWhitneyLess(ttfbs(self), ttfbs(cold))
	if selfByCount*2 < n && pSelf > cfg.Alpha {
		return inconclusive(ProbeCache, "no cache hit for the same tenant (%d/%d by cached_tokens, timing p=%.3g > alpha=%g): a shared cache would not show either",
			selfByCount, n, pSelf, cfg.Alpha)
	}
	pCross := mannWhitneyLess(ttfbs(cross), ttfbs(cold))
	if pCross <= cfg.Alpha {
		res := fail(ProbeCache, "timing: the other tenant's prefix is warm (median time to first byte %v vs %v cold, p=%.3g <= alpha=%g, %d pairs)",
			median(cross), median(cold), pCross, cfg.Alpha, n)
		res.Code = codeCacheShared
		return res
	}
	return pass(ProbeCache, "%d pairs isolated: own prefix hit %d/%d (timing p=%.3g), other tenant's cached 0, timing p=%.3g",
		n, selfByCount, n, pSelf, pCross)
}

func maxCached(os []cacheObs) int {
	m := 0
	for _, o := range os {
		m = max(m, o.cached)
	}
	return m
}

func median(os []cacheObs) time.Duration {
	d := make([]time.Duration, len(os))
	for i, o := range os {
		d[i] = o.ttfb
	}
	slices.Sort(d)
	return d[len(d)/2].Round(10 * time.Microsecond)
}

// cachePrefix is a fresh random text of about tokens o200k tokens: words
// of five random lowercase letters (about three tokens each in o200k_base),
// never a nonce-like word, so the toy model and the echo check leave it
// alone.
func cachePrefix(tokens int) string {
	n := max(tokens/3, 1)
	buf := make([]byte, 5*n)
	_, _ = crand.Read(buf) // crypto/rand.Read never fails (Go 1.24+)
	var b strings.Builder
	b.Grow(6 * n)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		for _, c := range buf[5*i : 5*i+5] {
			b.WriteByte('a' + c%26)
		}
	}
	return b.String()
}

// shuffled is text's words in a random order (another first block).
func shuffled(text string) string { return (*coins)(nil).shuffled(text) }

// mannWhitneyLess is the exact one-sided p-value of the Mann-Whitney test
// that x is stochastically smaller than y: the probability, over all
// equally likely assignments of the pooled ranks to the groups, of a rank
// sum of x at most the observed one. Ties take mid-ranks (the test stays
// exact conditionally on them); len(x)+len(y) must stay small (it is
// O(n^2 * n^2)).
func mannWhitneyLess(x, y []float64) float64 {
	n := len(x) + len(y)
	if len(x) == 0 || len(y) == 0 {
		return 1
	}
	type v struct {
		val float64
		x   bool
	}
	all := make([]v, 0, n)
	for _, a := range x {
		all = append(all, v{a, true})
	}
	for _, b := range y {
		all = append(all, v{b, false})
	}
	slices.SortStableFunc(all, func(a, b v) int {
		switch {
		case a.val < b.val:
			return -1
		case a.val > b.val:
			return 1
		}
		return 0
	})
	// Doubled mid-ranks are integers: ranks i+1..j share (i+1+j).
	ranks := make([]int, n)
	observed := 0
	for i := 0; i < n; {
		j := i
		for j < n && all[j].val == all[i].val {
			j++
		}
		for k := i; k < j; k++ {
			ranks[k] = i + 1 + j
			if all[k].x {
				observed += ranks[k]
			}
		}
		i = j
	}
	// ways[k][s]: subsets of k of the ranks seen so far with doubled sum s.
	total := n * (n + 1)
	m := len(x)
	ways := make([][]float64, m+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for _, rk := range ranks {
		for k := min(m, n); k >= 1; k-- {
			for s := total; s >= rk; s-- {
				ways[k][s] += ways[k-1][s-rk]
			}
		}
	}
	var le, all2 float64
	for s, w := range ways[m] {
		all2 += w
		if s <= observed {
			le += w
		}
	}
	return le / all2
}
