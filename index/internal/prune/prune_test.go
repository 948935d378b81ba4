package prune

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestTickRunsEveryNth(t *testing.T) {
	var p Pruner
	var runs atomic.Int64
	fn := func(context.Context) error { runs.Add(1); return nil }
	for range 3*Every - 1 {
		p.Tick(fn)
		p.Close() // waits for a started run, and...
		p.mu.Lock()
		p.closed = false // ...reopens, so each run finishes before the next tick
		p.mu.Unlock()
	}
	if got := runs.Load(); got != 2 {
		t.Errorf("runs after 3*Every-1 ticks = %d, want 2", got)
	}
}

func TestOneRunAtATime(t *testing.T) {
	var p Pruner
	release := make(chan struct{})
	var runs atomic.Int64
	fn := func(context.Context) error { runs.Add(1); <-release; return nil }
	for range 5 * Every {
		p.Tick(fn)
	}
	close(release)
	p.Close()
	if got := runs.Load(); got != 1 {
		t.Errorf("runs while one was blocked = %d, want 1", got)
	}
}

func TestNoRunAfterClose(t *testing.T) {
	var p Pruner
	p.Close()
	var runs atomic.Int64
	for range 2 * Every {
		p.Tick(func(context.Context) error { runs.Add(1); return nil })
	}
	p.Close()
	if got := runs.Load(); got != 0 {
		t.Errorf("runs after Close = %d, want 0", got)
	}
}
