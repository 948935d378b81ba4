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
// It is a count-min sketch with conservative update: two rows of 1<<17
// saturating 8-bit counters (256 KiB), halved every 1<<20 updates so old
// phrases fade. Counts only ever err upwards, which errs towards silence.
type common struct {
	mu      sync.RWMutex
	rows    [2][]uint8
	updates int
	learned int // responses learned from, saturating at maxInt32
}

const (
	commonBits  = 17
	commonDecay = 1 << 20
)

func newCommon() *common {
	c := &common{}
	for i := range c.rows {
		c.rows[i] = make([]uint8, 1<<commonBits)
	}
	return c
}

func commonIndex(g uint64) (uint32, uint32) {
	const mask = 1<<commonBits - 1
	return uint32(g) & mask, uint32(g>>32) & mask
}

// countLocked is the estimated number of responses that carried g; callers
// hold c.mu for reading.
func (c *common) countLocked(g uint64) int {
	i, j := commonIndex(g)
	return int(min(c.rows[0][i], c.rows[1][j]))
}

// warm reports whether at least n responses were learned from; callers
// hold c.mu for reading.
func (c *common) warmLocked(n int) bool { return c.learned >= n }

// learn adds one response's distinct k-grams (hashes is sorted and unique).
func (c *common) learn(hashes []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range hashes {
		i, j := commonIndex(g)
		n := min(c.rows[0][i], c.rows[1][j])
		if n == 255 {
			continue
		}
		// Conservative update: raise only the counters at the minimum.
		if c.rows[0][i] == n {
			c.rows[0][i]++
		}
		if c.rows[1][j] == n {
			c.rows[1][j]++
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
