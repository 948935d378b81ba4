package coalesce

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Triggers while a run waits to start join it; one trigger during a run
// queues exactly one more.
func TestTriggersCoalesce(t *testing.T) {
	var c Runs
	var wg sync.WaitGroup
	var runs atomic.Int32

	c.Lock() // a run on demand holds the unit: triggered runs wait
	for range 3 {
		c.Trigger(&wg, func() { runs.Add(1) })
	}
	c.Unlock()
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Fatalf("three triggers while one waited: %d runs, want 1", n)
	}

	started, release := make(chan struct{}), make(chan struct{})
	c.Trigger(&wg, func() {
		runs.Add(1)
		close(started)
		<-release
	})
	<-started
	for range 3 { // during the run: the first queues one more, the others join it
		c.Trigger(&wg, func() { runs.Add(1) })
	}
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 3 {
		t.Fatalf("after a run with triggers during it: %d runs in all, want 3", n)
	}
}

// Runs never overlap, triggered or on demand.
func TestRunsDoNotOverlap(t *testing.T) {
	var c Runs
	var wg sync.WaitGroup
	var in, most atomic.Int32
	body := func() {
		n := in.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		in.Add(-1)
	}
	for range 50 {
		c.Trigger(&wg, body)
		wg.Go(func() {
			c.Lock()
			defer c.Unlock()
			body()
		})
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Fatalf("%d runs at once, want 1", m)
	}
}
