package canary

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"
)

// modelClock is the simulator's model time, for the tests of the cache
// probe's timing test: the simulator spends prefill time on it (its
// Config.Sleep) instead of sleeping, and a target reads a request's time
// to first byte off it. On a loaded 2-core machine the wall clock's
// scheduler delays (tens of ms) drown a 15 ms prefill, so a test on it
// measured the machine, not the probe; on this clock the probe's
// statistic is tested on what it is meant to see. The clock adds a delay
// of its own to every request, drawn from a seeded exponential
// distribution (mean 2 ms, a scheduler's and network's noise), so that
// the cold and cross times of an honest route are exchangeable but not
// tied, and the false-alarm rate is measured on a real distribution.
// CUSTODY_MEASURE=1 runs on the wall clock instead (docs/canaries.md).
//
// One target's requests must not overlap for the reading to be theirs:
// the cache probe sends one request at a time.
type modelClock struct {
	mu  sync.Mutex
	now time.Duration
	rnd *rand.Rand
}

// seedOf is a seed named by a test (Config.Seed, the model clock's noise).
func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// newModelClock is a clock whose noise is seeded by name (a test's), so
// that a run draws the same noise each time.
func newModelClock(name string) *modelClock {
	return &modelClock{rnd: rand.New(rand.NewPCG(seedOf(name), 0x637573746f6479))}
}

// sleep is the simulator's Config.Sleep: it spends d and the noise at once.
func (c *modelClock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	noise := time.Duration(c.rnd.ExpFloat64()*float64(2*time.Millisecond)) + time.Microsecond
	c.now += d + noise
	return ctx.Err()
}

// read is the model time spent so far; 0 for no clock.
func (c *modelClock) read() time.Duration {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}
