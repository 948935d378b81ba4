package check

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

type step struct {
	key, req string
	at       time.Duration
	want     custody.Code
}

func TestReplay(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"first delivery", []step{{"id:a", "r1", 0, ""}}},
		{"same request again", []step{{"id:a", "r1", 0, ""}, {"id:a", "r1", time.Second, ""}}},
		{"swapped to another request", []step{{"id:a", "r1", 0, ""}, {"id:a", "r2", time.Second, custody.CodeResponseReplayed}}},
		{"after the window", []step{{"id:a", "r1", 0, ""}, {"id:a", "r2", time.Hour + time.Second, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReplay(time.Hour, 1000)
			for _, s := range tc.steps {
				wantCode(t, r.Claim(s.key, s.req, t0.Add(s.at)), s.want)
			}
		})
	}
}

func TestReplayBounded(t *testing.T) {
	r := NewReplay(time.Hour, 320)
	now := time.Now()
	for i := range 10000 {
		if err := r.Claim(fmt.Sprint("k", i), fmt.Sprint("r", i), now); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.Len(); n > 320 {
		t.Fatalf("remembers %d keys, bound is 320", n)
	}
	// The newest keys are still remembered.
	wantCode(t, r.Claim("k9999", "other", now), custody.CodeResponseReplayed)
}

func TestReplayConcurrentFirstWins(t *testing.T) {
	r := NewReplay(time.Hour, 1000)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.Claim("id:x", fmt.Sprint("r", i), time.Now()) == nil {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d winners, want 1", wins.Load())
	}
}
