package canary

import (
	"math/rand/v2"
	"strings"
	"sync"
)

// coins are the cache probe's random choices: math/rand's, or a seeded
// source's (Config.Seed) shared by the runner's routes under a lock. A nil
// *coins draws from math/rand.
type coins struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

func newCoins(seed uint64) *coins {
	if seed == 0 {
		return nil
	}
	return &coins{rnd: rand.New(rand.NewPCG(seed, seed^0x636f696e73))}
}

// intN is a number in [0, n).
func (c *coins) intN(n int) int {
	if c == nil {
		return rand.IntN(n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rnd.IntN(n)
}

// shuffled is text's words in a random order (another first block).
func (c *coins) shuffled(text string) string {
	w := strings.Fields(text)
	swap := func(i, j int) { w[i], w[j] = w[j], w[i] }
	if c == nil {
		rand.Shuffle(len(w), swap)
	} else {
		c.mu.Lock()
		c.rnd.Shuffle(len(w), swap)
		c.mu.Unlock()
	}
	return strings.Join(w, " ")
}
