package indextest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody/index"
)

// RunReopen checks what outlives an Index value, and what two Index
// values open on one store (two gateway replicas) share. store must create
// a new, empty store and return a function that opens it (again) each
// call; the suite closes what it opens.
func RunReopen(t *testing.T, store func(t *testing.T) func(t *testing.T) index.Index) {
	t.Run("KeepsData", func(t *testing.T) {
		open := store(t)
		x := open(t)
		mustPut(t, x, full("req-1"))
		if err := x.AddEvents(t.Context(), index.Event{Type: index.EventFallback, Detail: "a>b"}); err != nil {
			t.Fatal(err)
		}
		mustClaim(t, x, "k", "req-1", time.Hour)
		if err := x.RegisterShard(t.Context(), index.Shard{Origin: "o"}); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}

		// Opening again re-runs the migrations, which must find nothing to
		// do (they create tables without IF NOT EXISTS, so a re-applied
		// migration fails the open).
		y := open(t)
		defer y.Close()
		if r := mustGet(t, y, "req-1"); r.LeafIndex != 42 {
			t.Errorf("reopened record leaf %d, want 42", r.LeafIndex)
		}
		if es, err := y.Events(t.Context(), index.EventQuery{}); err != nil || len(es) != 1 {
			t.Errorf("reopened events = %v, %v", es, err)
		}
		if got := mustClaim(t, y, "k", "req-2", time.Hour); got != "req-1" {
			t.Errorf("reopened claim holder = %q, want req-1", got)
		}
		if ss, err := y.Shards(t.Context()); err != nil || len(ss) != 1 {
			t.Errorf("reopened shards = %v, %v", ss, err)
		}
		if n, err := y.MaxLeafIndex(t.Context(), full("").Shard); err != nil || n != 42 {
			t.Errorf("reopened MaxLeafIndex = %d, %v", n, err)
		}
	})
	t.Run("Replicas", func(t *testing.T) { testReplicas(t, store(t)) })
	t.Run("ConcurrentOpen", func(t *testing.T) {
		// Replicas starting together must not trip over each other's
		// migrations.
		open := store(t)
		xs := make([]index.Index, 4)
		var wg sync.WaitGroup
		for i := range xs {
			wg.Go(func() { xs[i] = open(t) })
		}
		wg.Wait()
		for i, x := range xs {
			if x == nil {
				t.Fatalf("open %d failed", i)
			}
			mustPut(t, x, full("req-c"))
		}
		for _, x := range xs {
			if err := x.Close(); err != nil {
				t.Error(err)
			}
		}
	})
}

// testReplicas: two replicas on one store, each writing its own shard,
// see each other's records, and agree on every claim.
func testReplicas(t *testing.T, open func(t *testing.T) index.Index) {
	a, b := open(t), open(t)
	defer a.Close()
	defer b.Close()
	ra, rb := full("req-a"), full("req-b")
	ra.Shard, ra.LeafIndex = "shard-a", 7
	rb.Shard, rb.LeafIndex = "shard-b", 3
	mustPut(t, a, ra)
	mustPut(t, b, rb)
	wantIDs(t, "replica a sees", mustSearch(t, a, index.Query{}), "req-b", "req-a")
	for _, x := range []index.Index{a, b} {
		if n, err := x.MaxLeafIndex(t.Context(), "shard-b"); err != nil || n != 3 {
			t.Errorf("MaxLeafIndex(shard-b) = %d, %v; want 3", n, err)
		}
	}
	// The same response seen through both replicas: one winner, and the
	// loser's replica names it.
	const claimants = 16
	for round := range 5 {
		key := fmt.Sprintf("resp-%d", round)
		got := make([]string, claimants)
		var wg sync.WaitGroup
		for i := range claimants {
			x := a
			if i%2 == 1 {
				x = b
			}
			wg.Go(func() {
				h, err := x.ClaimResponse(t.Context(), key, fmt.Sprintf("req-%d", i), time.Minute)
				if err != nil {
					t.Error(err)
				}
				got[i] = h
			})
		}
		wg.Wait()
		winners := 0
		for i, h := range got {
			if h != got[0] {
				t.Fatalf("round %d: replicas disagree: %q vs %q", round, h, got[0])
			}
			if h == fmt.Sprintf("req-%d", i) {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners, want 1", round, winners)
		}
	}
}
