package check

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
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

// TestReplayMessageNamesNoRequest: the refusal never names the request
// that first received the response (it may be another tenant's).
func TestReplayMessageNamesNoRequest(t *testing.T) {
	r := NewReplay(time.Hour, 1000)
	now := time.Now()
	r.Claim("id:a", "req-of-another-tenant", now)
	err := r.Claim("id:a", "r2", now)
	wantCode(t, err, custody.CodeResponseReplayed)
	var e *custody.Error
	if errors.As(err, &e); strings.Contains(e.Message, "req-of-another-tenant") {
		t.Errorf("message names the other request: %q", e.Message)
	}
}

// TestResponseClaims (AppendResponseClaims): the id is claimed by the transaction; the body
// digest by the request it answered, so the same answer to the same
// request (from any tenant, in any member order or spacing) is not a
// replay and the same answer to another request is.
func TestResponseClaims(t *testing.T) {
	embReq := []byte(`{"model":"e","input":"the same words"}`)
	embReq2 := []byte(` { "input" : "the same words", "model":"e", "user":"tenant-b-user"}`)
	otherReq := []byte(`{"model":"e","input":"other words"}`)
	answer := []byte(`{"object":"list","data":[{"index":0,"embedding":[0.1,0.2]}],"model":"e"}`)
	now := time.Now()
	for _, tc := range []struct {
		name   string
		second []byte // the second request, answered with the same body
		want   custody.Code
	}{
		{"same request again", embReq, ""},
		{"same request, other spelling and user", embReq2, ""},
		{"another request", otherReq, custody.CodeResponseReplayed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReplay(time.Hour, 1000)
			claim := func(tx string, req []byte) error {
				for _, c := range AppendResponseClaims(nil, "p", "", tx, digest(t, req), answer) {
					if err := r.Claim(c.Key, c.Owner, now); err != nil {
						return err
					}
				}
				return nil
			}
			wantCode(t, claim("tx1", embReq), "")
			wantCode(t, claim("tx2", tc.second), tc.want)
		})
	}
	t.Run("id claimed once", func(t *testing.T) {
		r := NewReplay(time.Hour, 1000)
		body := []byte(`{"id":"chatcmpl-1","choices":[]}`)
		req := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		for i, tx := range []string{"tx1", "tx2"} {
			var err error
			for _, c := range AppendResponseClaims(nil, "p", "chatcmpl-1", tx, digest(t, req), body) {
				if err = r.Claim(c.Key, c.Owner, now); err != nil {
					break
				}
			}
			wantCode(t, err, []custody.Code{"", custody.CodeResponseReplayed}[i])
		}
	})
	if cs := AppendResponseClaims(nil, "p", "", "tx", [32]byte{}, nil); len(cs) != 0 {
		t.Errorf("claims without id or body: %v", cs)
	}
}

// BenchmarkResponseClaims (AppendResponseClaims): the claims of a plain chat response (the
// request's canonical digest is most of the cost).
func BenchmarkResponseClaims(b *testing.B) {
	req := []byte(`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"` + strings.Repeat("the quick brown fox ", 20) + `"}],"temperature":0.2,"user":"u-1"}`)
	resp := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("jumps ", 40) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160}}`)
	r, _ := openai.ParseRequest(req)
	b.ReportAllocs()
	for b.Loop() {
		AppendResponseClaims(nil, "p", "chatcmpl-1", "tx", r.Digest("m"), resp)
	}
}

func digest(t testing.TB, body []byte) [32]byte {
	r, err := openai.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return r.Digest("e")
}

// TestReplayCompact: a table costs at most 56 bytes of heap a claim (32
// in the ring, a 4-byte slot in an index at most half full, with room to
// spare), so that the default bound stays a small part of a gateway's
// memory. (On Linux it costs none: TestReplayOffHeap.)
func TestReplayCompact(t *testing.T) {
	const n = 200_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("id\x00sim\x00chatcmpl-%d", i)
	}
	owner := "01JABCDEFGHJKMNPQRSTVWXYZ0"
	now := time.Now()
	grown := heapGrowth(t, 56*n, func() *Replay {
		r := NewReplay(time.Hour, n)
		for _, k := range keys {
			if err := r.Claim(k, owner, now); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}, func(r *Replay) {
		wantCode(t, r.Claim(keys[n-1], "another", now), custody.CodeResponseReplayed)
	})
	if per := float64(grown) / n; per > 56 {
		t.Errorf("%.0f bytes of heap per entry, want at most 56", per)
	} else {
		t.Logf("%.1f bytes of heap per entry", per)
	}
}

// TestReplayNamesFirstOwner: a replay's error (the operator's log, never
// the client's message) names the first owner of a transaction id or a
// request digest exactly, though the table keeps only 16 bytes of it;
// owners of other forms are compared by hash.
func TestReplayNamesFirstOwner(t *testing.T) {
	r := NewReplay(time.Hour, 1000)
	now := time.Now()
	first := custody.NewID(now)
	digestOwner := "request:00112233445566778899aabbccddeeff"
	for _, c := range []struct{ key, owner, second string }{
		{"id\x00sim\x00chatcmpl-1", first, custody.NewID(now)},
		{"digest\x00ab", digestOwner, "request:00112233445566778899aabbccddeefe"},
		{"id\x00sim\x00chatcmpl-2", "r1", "r2"},
		// Spellings that would decode to the same bytes stay apart.
		{"id\x00sim\x00chatcmpl-3", digestOwner, strings.ToUpper(digestOwner)},
	} {
		if err := r.Claim(c.key, c.owner, now); err != nil {
			t.Fatal(err)
		}
		if err := r.Claim(c.key, c.owner, now); err != nil {
			t.Fatalf("the first owner claiming %q again: %v", c.key, err)
		}
		err := r.Claim(c.key, c.second, now)
		wantCode(t, err, custody.CodeResponseReplayed)
		var e *custody.Error
		errors.As(err, &e)
		if c.owner != "r1" && !strings.Contains(e.Err.Error(), c.owner) {
			t.Errorf("replay of %q: %v, want it to name %s", c.key, e.Err, c.owner)
		}
		if strings.Contains(e.Message, c.owner) {
			t.Errorf("the client's message names the first owner: %q", e.Message)
		}
	}
}
