package indextest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/prune"
)

func testClaimFirstWins(t *testing.T, x index.Index) {
	if got := mustClaim(t, x, "chatcmpl-1", "req-a", time.Minute); got != "req-a" {
		t.Errorf("first claim = %q, want req-a", got)
	}
	if got := mustClaim(t, x, "chatcmpl-1", "req-b", time.Minute); got != "req-a" {
		t.Errorf("second claim = %q, want req-a", got)
	}
	if got := mustClaim(t, x, "chatcmpl-1", "req-a", time.Minute); got != "req-a" {
		t.Errorf("repeated claim by the holder = %q, want req-a", got)
	}
	if got := mustClaim(t, x, "chatcmpl-2", "req-b", time.Minute); got != "req-b" {
		t.Errorf("claim of another key = %q, want req-b", got)
	}
}

func testClaimExpiry(t *testing.T, x index.Index) {
	const ttl = 400 * time.Millisecond
	began := time.Now()
	if got := mustClaim(t, x, "k", "req-a", ttl); got != "req-a" {
		t.Fatalf("first claim = %q", got)
	}
	// Asserted only while the ttl surely runs: on a loaded machine the
	// second claim may come later than the first's ttl.
	if got := mustClaim(t, x, "k", "req-b", time.Minute); got != "req-a" && time.Since(began) < ttl {
		t.Fatalf("claim within ttl = %q, want req-a", got)
	}
	time.Sleep(time.Until(began.Add(ttl + 100*time.Millisecond)))
	if got := mustClaim(t, x, "k", "req-b", time.Minute); got != "req-b" {
		t.Errorf("claim after expiry = %q, want req-b", got)
	}
	// The new claim has the new ttl: the old holder cannot take it back.
	if got := mustClaim(t, x, "k", "req-a", time.Minute); got != "req-b" {
		t.Errorf("old holder's claim after takeover = %q, want req-b", got)
	}
}

// testClaimConcurrent: 16 claimants of one key agree on exactly one
// winner, every round.
func testClaimConcurrent(t *testing.T, x index.Index) {
	const claimants = 16
	for round := range 10 {
		key := fmt.Sprintf("digest-%d", round)
		got := make([]string, claimants)
		errs := make([]error, claimants)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range claimants {
			wg.Go(func() {
				<-start
				got[i], errs[i] = x.ClaimResponse(t.Context(), key, fmt.Sprintf("req-%d", i), time.Minute)
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		for i := range claimants {
			if errs[i] != nil {
				t.Fatalf("round %d claimant %d: %v", round, i, errs[i])
			}
			if got[i] != got[0] {
				t.Fatalf("round %d: claimants disagree: %q vs %q", round, got[i], got[0])
			}
			if got[i] == fmt.Sprintf("req-%d", i) {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners, want 1 (holder %q)", round, winners, got[0])
		}
	}
}

func testClaimInvalid(t *testing.T, x index.Index) {
	tests := []struct {
		name, key, id string
		ttl           time.Duration
	}{
		{"no key", "", "req", time.Minute},
		{"no request id", "k", "", time.Minute},
		{"zero ttl", "k", "req", 0},
		{"negative ttl", "k", "req", -time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := x.ClaimResponse(t.Context(), tt.key, tt.id, tt.ttl); err == nil {
				t.Error("ClaimResponse succeeded")
			}
		})
	}
}

func testPruneClaims(t *testing.T, x index.Index) {
	mustClaim(t, x, "short", "req-a", time.Millisecond)
	mustClaim(t, x, "long", "req-a", time.Hour)
	time.Sleep(10 * time.Millisecond)
	n, err := x.PruneClaims(t.Context())
	if err != nil {
		t.Fatalf("PruneClaims: %v", err)
	}
	if n != 1 {
		t.Errorf("PruneClaims removed %d, want 1", n)
	}
	if got := mustClaim(t, x, "long", "req-b", time.Hour); got != "req-a" {
		t.Errorf("live claim after prune = %q, want req-a", got)
	}
	if n, _ := x.PruneClaims(t.Context()); n != 0 {
		t.Errorf("second PruneClaims removed %d, want 0", n)
	}
}

// testPruneOnWrite: claims clean up after themselves, so the table stays
// bounded without anyone calling PruneClaims.
func testPruneOnWrite(t *testing.T, x index.Index) {
	if testing.Short() {
		t.Skip("makes thousands of claims")
	}
	const n = 2 * prune.Every
	for i := range n {
		mustClaim(t, x, fmt.Sprintf("k%d", i), "req", time.Nanosecond)
	}
	time.Sleep(200 * time.Millisecond) // let a background cleanup finish
	left, err := x.PruneClaims(t.Context())
	if err != nil {
		t.Fatalf("PruneClaims: %v", err)
	}
	if left > prune.Every {
		t.Errorf("%d expired claims left of %d: claims are not pruned on write", left, n)
	}
}
