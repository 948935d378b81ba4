package contamination

import "sync"

// common counts in how many responses each k-gram appeared outside the
// response's own prompt: the phrases models say to everyone ("let me know if
// you have any other questions"). A remembered prompt may quote such a phrase
// (a chat history holds the assistant's earlier answers), and a response that
// says it again has not leaked anything. The prompt-side stop list
// (MaxSharedBy) needs several prompts to hold a phrase; this learns it from
// the responses themselves, which is what quiets a freshly started gateway.
//
// It is a count-min sketch with conservative update: four rows of 1<<20
// saturating 8-bit counters (4 MiB), halved every 1<<18 updates so old
// phrases fade. Counts only ever err upwards, which errs towards silence;
// the size and the decay keep every row under a quarter full, so that a
// count of 1 (CommonAfter's default) is wrong for well under 1% of k-grams
// (the two rows of 1<<17 there were filled within 20,000 responses, after
// which nearly every k-gram looked common).
//
// What one tenant can teach is bounded: each k-gram's counter in the first
// row remembers a tag of the last tenant that taught it (tags), and a
// tenant that taught it last does not raise it again; a k-gram whose
// count that one tenant alone could have made is not generic to that
// tenant (genericLocked). A tenant therefore cannot make a phrase generic
// for itself by having the model say it (to then receive another
// tenant's prompt that holds it unflagged), and retrying a leak teaches
// nothing in any case (only served, unflagged responses are learnt from:
// Scanner.Close).
type common struct {
	mu      sync.RWMutex
	rows    [commonRows][]uint8
	tags    []uint16 // per counter of rows[0]: the last teaching tenant's tag; 0 none
	updates int
	learned int // responses learned from, saturating at maxInt32
}

const (
	commonRows  = 4
	commonBits  = 20
	commonDecay = 1 << 18
)

func newCommon() *common {
	c := &common{tags: make([]uint16, 1<<commonBits)}
	for i := range c.rows {
		c.rows[i] = make([]uint8, 1<<commonBits)
	}
	return c
}

// commonIndex is g's counter in each row: g remixed for each row, so that
// the rows are independent.
func commonIndex(g uint64) (idx [commonRows]uint32) {
	const mask = 1<<commonBits - 1
	h := g
	for r := range idx {
		idx[r] = uint32(h) & mask
		h = mix64(h + 0x9e3779b97f4a7c15)
	}
	return idx
}

// countLocked is the estimated number of responses that carried g; callers
// hold c.mu for reading.
func (c *common) countLocked(g uint64) int {
	idx := commonIndex(g)
	n := uint8(255)
	for r, i := range idx {
		n = min(n, c.rows[r][i])
	}
	return int(n)
}

// genericLocked reports whether g is a generic phrase for a response to
// the tenant tagged tenant (0: none): counted at least after times, and
// not by that tenant's answers alone (a count of 1 whose teacher is the
// tenant). Callers hold c.mu for reading.
func (c *common) genericLocked(g uint64, after int, tenant uint16) bool {
	n := c.countLocked(g)
	if n < after {
		return false
	}
	if tenant != 0 && n < 2 && c.tags[commonIndex(g)[0]] == tenant {
		return false
	}
	return true
}

// warm reports whether at least n responses were learned from; callers
// hold c.mu for reading.
func (c *common) warmLocked(n int) bool { return c.learned >= n }

// learn adds one response's distinct k-grams (hashes is sorted and
// unique), answered to the tenant tagged tenant (0: none): a k-gram that
// tenant taught last is not counted again.
func (c *common) learn(hashes []uint64, tenant uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range hashes {
		idx := commonIndex(g)
		if tenant != 0 {
			if c.tags[idx[0]] == tenant {
				continue
			}
			c.tags[idx[0]] = tenant
		}
		n := uint8(255)
		for r, i := range idx {
			n = min(n, c.rows[r][i])
		}
		if n == 255 {
			continue
		}
		// Conservative update: raise only the counters at the minimum.
		for r, i := range idx {
			if c.rows[r][i] == n {
				c.rows[r][i]++
			}
		}
	}
	c.updates += len(hashes)
	c.learned = min(c.learned+1, 1<<31-1)
	if c.updates >= commonDecay {
		c.updates = 0
		for _, r := range c.rows {
			for k := range r {
				r[k] >>= 1
			}
		}
	}
}

// tenantTag is a 16-bit tag of a tenant, never 0 for a named one (0: no
// tenant). Two tenants may share a tag (1 in 65535): the bound then holds
// for the two together, which errs towards reporting.
func tenantTag(tenant string) uint16 {
	if tenant == "" {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(tenant); i++ {
		h = (h ^ uint32(tenant[i])) * 16777619
	}
	return uint16(h%65535) + 1
}
