package gateway

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/custody-gateway/custody"
)

// budgetWait is how long a request waits for room in the in-flight
// budget before it is refused with overloaded.
const budgetWait = time.Second

// firstReserve is what an attempt reserves before it calls the upstream:
// the room its answer's first read needs. While the budget has not that
// much left, new requests wait (and are refused) before they cost the
// upstream anything.
const firstReserve = 64 << 10

// Budget is the process-wide budget of upstream body bytes held in
// memory by in-flight responses (limits.max_inflight_bytes): a plain
// answer's body as it is read, a stream's largest event. A request that
// cannot reserve what it needs waits, up to budgetWait, for others to
// release theirs, then is refused 503 overloaded with Retry-After: 1;
// memory is never promised twice. One Budget is shared by every exchange
// of the process, across reloads.
type Budget struct {
	mu    sync.Mutex
	wait  time.Duration // how long a reservation waits for room; guarded by mu
	max   int64         // guarded by mu
	used  int64         // guarded by mu
	freed chan struct{} // closed (and replaced) when bytes are released; guarded by mu
	waits int           // reservations waiting for room; guarded by mu
}

// NewBudget is a budget of max bytes (limits.max_inflight_bytes).
func NewBudget(max int64) *Budget {
	return &Budget{max: max, wait: budgetWait, freed: make(chan struct{})}
}

// Reserved is the number of bytes reserved now (custody_inflight_bytes).
func (b *Budget) Reserved() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// SetMax changes the budget (a reload); what is reserved stays reserved,
// and a smaller budget takes no new reservation until enough is released.
func (b *Budget) SetMax(max int64) {
	b.mu.Lock()
	b.max = max
	b.wake()
	b.mu.Unlock()
}

// setWait changes how long a reservation waits for room (tests).
func (b *Budget) setWait(d time.Duration) {
	b.mu.Lock()
	b.wait = d
	b.mu.Unlock()
}

// errOverloaded refuses what the budget cannot hold.
func errOverloaded() *custody.Error {
	return &custody.Error{Code: custody.CodeOverloaded, RetryAfter: 1,
		Message: "custody holds as many answers in memory as limits.max_inflight_bytes allows; retry shortly"}
}

// reserve takes n bytes, waiting up to b.wait for them. It fails with
// overloaded when they do not come free in time (or can never: n over
// the whole budget), or with ctx's error when ctx ends first.
func (b *Budget) reserve(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if n > b.max {
			b.mu.Unlock()
			return errOverloaded() // never room for it
		}
		if b.used+n <= b.max {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		if timeout == nil {
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timeout = t.C
			b.waits++
			defer b.doneWaiting()
		}
		b.mu.Unlock()
		select {
		case <-freed:
		case <-timeout:
			return errOverloaded()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *Budget) doneWaiting() {
	b.mu.Lock()
	b.waits--
	b.mu.Unlock()
}

// waiting is the number of reservations waiting for room.
func (b *Budget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waits
}

// release returns n bytes and wakes the waiters.
func (b *Budget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.wake()
	b.mu.Unlock()
}

// wake tells the waiters, if any, to look again; b.mu is held. (A
// waiter counts itself in waits under b.mu when it takes b.freed, so
// none is missed; with none, no channel is made per release.)
func (b *Budget) wake() {
	if b.waits > 0 {
		close(b.freed)
		b.freed = make(chan struct{})
	}
}

// hold is one attempt's share of the budget: what it has reserved, grown
// as its answer needs more and returned whole when the attempt ends
// (free, deferred, whatever way it ends). A nil *hold holds nothing and
// never waits.
type hold struct {
	b   *Budget
	ctx context.Context
	n   int64
}

// hold starts a hold in h, the caller's storage (an exchange keeps its
// current attempt's, which saves an allocation a request), and returns
// it; nil if there is no budget.
func (b *Budget) hold(ctx context.Context, h *hold) *hold {
	if b == nil {
		return nil
	}
	*h = hold{b: b, ctx: ctx}
	return h
}

// upTo grows the reservation to at least n bytes.
func (h *hold) upTo(n int64) error {
	if h == nil || n <= h.n {
		return nil
	}
	if err := h.b.reserve(h.ctx, n-h.n); err != nil {
		return err
	}
	h.n = n
	return nil
}

// free returns everything held.
func (h *hold) free() {
	if h == nil {
		return
	}
	h.b.release(h.n)
	h.n = 0
}

// streamMeter reads a stream's body for the SSE reader, reserving the
// bytes of the event being read: its reservation grows to the largest
// event seen (the reader's buffers keep that size for the next ones) and
// is returned when the stream ends. Past the budget a read fails with
// overloaded, which ends the stream.
type streamMeter struct {
	r     io.Reader
	h     *hold
	event int64 // bytes read since the last event was dispatched
	base  int64 // reserved before the stream: the first read's room
	err   error // the budget's refusal, once
}

func (m *streamMeter) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	n, err := m.r.Read(p)
	m.event += int64(n)
	if e := m.h.upTo(m.base + m.event); e != nil {
		m.err = e
		return n, e
	}
	return n, err
}

// dispatched starts counting the next event.
func (m *streamMeter) dispatched() { m.event = 0 }

// refused is the budget's refusal of the stream, if that is why it ended.
func (m *streamMeter) refused(err error) *custody.Error {
	var e *custody.Error
	if m.err != nil && errors.As(err, &e) && e.Code == custody.CodeOverloaded {
		return e
	}
	return nil
}
