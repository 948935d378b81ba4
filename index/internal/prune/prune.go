// Package prune runs a backend's cleanup of expired claims now and then,
// driven by writes rather than a timer: every Every-th Tick starts one
// cleanup in the background unless one is already running, so the claims
// table stays bounded by the claims made within one ttl plus Every, and an
// idle index runs nothing.
package prune

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Every is how many claims pass between two cleanups.
const Every = 1024

// timeout bounds one background cleanup.
const timeout = time.Minute

// Pruner is safe for concurrent use. Its zero value is ready.
type Pruner struct {
	ticks atomic.Int64

	mu      sync.Mutex // guards running, closed and the Add of wg
	running bool
	closed  bool
	wg      sync.WaitGroup
}

// Tick counts one claim and, every Every ticks, runs fn in the background.
// fn's error is dropped: a failed cleanup is retried Every ticks later and
// costs only table size.
func (p *Pruner) Tick(fn func(ctx context.Context) error) {
	if p.ticks.Add(1)%Every != 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running || p.closed {
		return
	}
	p.running = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = fn(ctx)
		p.mu.Lock()
		p.running = false
		p.mu.Unlock()
	}()
}

// Close stops new cleanups and waits for a running one to end.
func (p *Pruner) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
}
