package upstream

import (
	"sync"
	"time"
)

// Breaker is a provider's circuit breaker. Closed, it lets calls through
// and counts consecutive failures; at Threshold it opens for Cooldown
// (or the upstream's Retry-After, if longer). Open, it refuses calls.
// After the cooldown it is half-open: one probe call goes through; its
// success closes the breaker, its failure opens it again for twice the
// cooldown, up to MaxCooldown.
type Breaker struct {
	Threshold   int
	Cooldown    time.Duration
	MaxCooldown time.Duration

	mu       sync.Mutex
	failures int       // consecutive failures; guarded by mu
	until    time.Time // open until; zero when closed
	backoff  time.Duration
	probing  bool // a half-open probe is in flight
}

// NewBreaker opens after threshold consecutive failures.
func NewBreaker(threshold int, cooldown time.Duration) *Breaker {
	return &Breaker{Threshold: threshold, Cooldown: cooldown, MaxCooldown: 16 * cooldown}
}

// State names for metrics and the console.
const (
	StateClosed   = "closed"
	StateOpen     = "open"
	StateHalfOpen = "half_open"
)

// State is the breaker's state at now.
func (b *Breaker) State(now time.Time) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state(now)
}

func (b *Breaker) state(now time.Time) string {
	switch {
	case b.until.IsZero():
		return StateClosed
	case now.Before(b.until):
		return StateOpen
	}
	return StateHalfOpen
}

// Allow reports whether a call may go through now; in half-open state it
// admits one probe at a time.
func (b *Breaker) Allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state(now) {
	case StateClosed:
		return true
	case StateOpen:
		return false
	}
	if b.probing {
		return false
	}
	b.probing = true
	return true
}

// Success records a call that worked: the breaker closes.
func (b *Breaker) Success() {
	b.mu.Lock()
	b.failures, b.until, b.backoff, b.probing = 0, time.Time{}, 0, false
	b.mu.Unlock()
}

// Failure records a failed call; retryAfter, when positive, is the
// upstream's own request to wait and opens the breaker at once.
func (b *Breaker) Failure(now time.Time, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	halfOpen := b.probing
	b.probing = false
	if !halfOpen && b.failures < b.Threshold && retryAfter <= 0 {
		return
	}
	switch {
	case b.backoff == 0:
		b.backoff = b.Cooldown
	case halfOpen:
		b.backoff = min(2*b.backoff, b.MaxCooldown)
	}
	b.until = now.Add(max(b.backoff, retryAfter))
}
