//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/index"
)

// heldIndex records events, the first AddEvents waiting until released.
type heldIndex struct {
	index.Index
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	got     []index.Event
}

func (h *heldIndex) AddEvents(_ context.Context, evs ...index.Event) error {
	h.once.Do(func() { <-h.release })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, evs...)
	return nil
}

// TestContractEventsCloseRecordsTheQueue: events queued when the contract
// events close (the index busy with an earlier one) are still recorded
// and sent, not dropped with the goroutine.
func TestContractEventsCloseRecordsTheQueue(t *testing.T) {
	t.Parallel() // in-memory, nothing shared
	idx := &heldIndex{release: make(chan struct{})}
	var mu sync.Mutex
	var sent int
	notify := func(index.Event) { mu.Lock(); sent++; mu.Unlock() }
	c := startContractEvents(&config.Config{}, idx, notify, slog.New(slog.NewTextHandler(io.Discard, nil)))
	// Twenty events: without the drain, the goroutine's select between
	// the close and the queue drops the rest at its first pick of the
	// close, so all twenty go out by chance once in a million runs.
	const n = 20
	for i := range n {
		c.queue <- custody.Event{Type: index.EventContract, Route: fmt.Sprintf("m%d/p", i), Detail: "dropped"}
	}
	closed := make(chan struct{})
	go func() { c.close(); close(closed) }()
	close(idx.release)
	<-closed
	if len(idx.got) != n || sent != n {
		t.Fatalf("recorded %d and sent %d of the %d events queued before the close", len(idx.got), sent, n)
	}
}
