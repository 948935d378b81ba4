// Package coalesce runs one unit of work (a canary route's probes, an
// eval suite on a route) one run at a time, with triggers that coalesce:
// while a triggered run waits to start, further triggers join it; a
// trigger arriving during a run queues one more run after it, so the
// newest state is always looked at once more and never more than once.
package coalesce

import "sync"

// Runs serialises the runs of one unit and coalesces its triggered runs.
// The zero value is ready.
type Runs struct {
	run sync.Mutex // held for a whole run: one at a time

	mu      sync.Mutex
	pending bool // a triggered run waits to start; guarded by mu
}

// Lock holds the unit for a run that is not triggered (a run on demand,
// an enrollment): triggered runs wait for Unlock.
func (c *Runs) Lock() { c.run.Lock() }

// Unlock releases the unit that Lock held.
func (c *Runs) Unlock() { c.run.Unlock() }

// Trigger starts fn in the background, in wg, with the unit held, unless
// a triggered run waits to start already (then fn joins that one and is
// not called).
func (c *Runs) Trigger(wg *sync.WaitGroup, fn func()) {
	c.mu.Lock()
	if c.pending {
		c.mu.Unlock()
		return
	}
	c.pending = true
	c.mu.Unlock()
	wg.Go(func() {
		c.run.Lock()
		defer c.run.Unlock()
		c.mu.Lock()
		c.pending = false
		c.mu.Unlock()
		fn()
	})
}
