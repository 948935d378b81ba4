package upstream

import (
	"testing"
	"time"
)

func TestBreaker(t *testing.T) {
	t0 := time.Unix(0, 0)
	b := NewBreaker(3, time.Second)
	for i := range 2 {
		b.Failure(t0, 0)
		if !b.Allow(t0) {
			t.Fatalf("open after %d failures, threshold 3", i+1)
		}
	}
	b.Failure(t0, 0)
	if b.Allow(t0) || b.State(t0) != StateOpen {
		t.Fatal("not open after 3 consecutive failures")
	}
	t1 := t0.Add(time.Second)
	if b.State(t1) != StateHalfOpen || !b.Allow(t1) {
		t.Fatal("no half-open probe after the cooldown")
	}
	if b.Allow(t1) {
		t.Fatal("a second probe while the first is in flight")
	}
	b.Failure(t1, 0)
	if b.Allow(t1.Add(1500 * time.Millisecond)) {
		t.Fatal("failed probe must reopen for twice the cooldown")
	}
	t2 := t1.Add(2 * time.Second)
	if !b.Allow(t2) {
		t.Fatal("no probe after the doubled cooldown")
	}
	b.Success()
	if b.State(t2) != StateClosed || !b.Allow(t2) {
		t.Fatal("probe success must close")
	}
}

func TestBreakerRetryAfter(t *testing.T) {
	t0 := time.Unix(0, 0)
	b := NewBreaker(5, time.Second)
	b.Failure(t0, 30*time.Second)
	if b.Allow(t0.Add(29 * time.Second)) {
		t.Fatal("Retry-After not respected")
	}
	if !b.Allow(t0.Add(30 * time.Second)) {
		t.Fatal("still open after Retry-After")
	}
}

func TestBreakerSuccessResetsCount(t *testing.T) {
	t0 := time.Unix(0, 0)
	b := NewBreaker(2, time.Second)
	b.Failure(t0, 0)
	b.Success()
	b.Failure(t0, 0)
	if !b.Allow(t0) {
		t.Fatal("failures are consecutive: a success in between resets them")
	}
}
