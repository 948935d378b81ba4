package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// longPrefix is n fresh words: a prefix no earlier request sent.
func longPrefix(n int) string {
	w := make([]string, n)
	tag := randomID(4)
	for i := range w {
		w[i] = fmt.Sprintf("w%s%d", tag, i)
	}
	return strings.Join(w, " ")
}

// saltedBody is a one-token chat request for prompt with cache_salt (nil:
// none) and extra members.
func saltedBody(prompt string, salt *string, extra map[string]any) map[string]any {
	b := chatBody("sim-1", false, prompt)
	b["max_tokens"] = 1
	if salt != nil {
		b["cache_salt"] = *salt
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func cachedTokens(t *testing.T, r reply) int {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	u := r.resp.Usage
	if len(r.events) > 0 {
		u = r.events[len(r.events)-1].Usage
	}
	if u == nil {
		t.Fatalf("no usage: %s", r.body)
	}
	if u.PromptTokensDetails == nil {
		return 0
	}
	k := u.PromptTokensDetails.CachedTokens
	if k < 0 || k >= u.PromptTokens {
		t.Fatalf("cached_tokens %d outside [0, prompt_tokens %d)", k, u.PromptTokens)
	}
	return k
}

func TestPrefixCache(t *testing.T) {
	a, b := "tenant-a", "tenant-b"
	for _, tc := range []struct {
		name       string
		faults     string         // X-Sim-Fault on every request
		first      *string        // the first request's salt
		second     *string        // the second's
		extra      map[string]any // members of both requests
		wantHit    bool           // the second reports cached_tokens > 0
		streamBoth bool
	}{
		{name: "same salt hits", first: &a, second: &a, wantHit: true},
		{name: "no salt hits", wantHit: true},
		{name: "same salt hits, streamed", first: &a, second: &a, wantHit: true, streamBoth: true},
		{name: "different salt misses", first: &a, second: &b},
		{name: "salt vs none misses", first: &a},
		{name: "cache_prompt false misses", first: &a, second: &a, extra: map[string]any{"cache_prompt": false}},
		{name: "shared-cache hits across salts", faults: "shared-cache", first: &a, second: &b, wantHit: true},
		{name: "shared-cache-timing reports no hit across salts", faults: "shared-cache-timing", first: &a, second: &b},
		{name: "shared-cache-timing reports its own hits", faults: "shared-cache-timing", first: &a, second: &a, wantHit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, Config{AllowFaultHeader: true})
			prefix := longPrefix(200)
			h := []string{"X-Sim-Fault", tc.faults}
			b1 := saltedBody(prefix+" first question", tc.first, tc.extra)
			b2 := saltedBody(prefix+" second question", tc.second, tc.extra)
			if tc.streamBoth {
				for _, b := range []map[string]any{b1, b2} {
					b["stream"] = true
					b["stream_options"] = map[string]any{"include_usage": true}
				}
			}
			if k := cachedTokens(t, post(t, ts, "/v1/chat/completions", b1, h...)); k != 0 {
				t.Fatalf("first request: cached_tokens %d on a fresh prefix", k)
			}
			k := cachedTokens(t, post(t, ts, "/v1/chat/completions", b2, h...))
			switch {
			case tc.wantHit && k == 0:
				t.Fatal("second request: cached_tokens 0, want a hit")
			case !tc.wantHit && k != 0:
				t.Fatalf("second request: cached_tokens %d, want 0", k)
			}
			if tc.wantHit {
				// The shared part is the template's header and 200
				// words: 12 full blocks of 16 words, every one of them
				// at least one o200k token.
				if k < 12*16 {
					t.Errorf("cached_tokens %d, want at least the 12 shared blocks", k)
				}
			}
		})
	}
}

func TestPrefixCacheReportsDetailsOnlyWhenAsked(t *testing.T) {
	ts := newTestServer(t, Config{})
	r := post(t, ts, "/v1/chat/completions", saltedBody("hello there", nil, nil))
	if r.resp.Usage.PromptTokensDetails != nil {
		t.Errorf("a request without cache_salt and no hit got prompt_tokens_details: %s", r.body)
	}
	s := "x"
	r = post(t, ts, "/v1/chat/completions", saltedBody("hello there", &s, nil))
	if d := r.resp.Usage.PromptTokensDetails; d == nil || d.CachedTokens != 0 {
		t.Errorf("a salted request on a cold cache: details %+v, want cached_tokens 0", d)
	}
}

func TestPrefixCacheIsBounded(t *testing.T) {
	ts := newTestServer(t, Config{CacheBlocks: 20})
	salt := "t"
	first := longPrefix(200) // 12 blocks, then evicted by the next ones
	post(t, ts, "/v1/chat/completions", saltedBody(first+" q", &salt, nil))
	for range 3 {
		post(t, ts, "/v1/chat/completions", saltedBody(longPrefix(200)+" q", &salt, nil))
	}
	if k := cachedTokens(t, post(t, ts, "/v1/chat/completions", saltedBody(first+" q", &salt, nil))); k != 0 {
		t.Errorf("cached_tokens %d after the prefix was evicted", k)
	}
}

// TestPrefillDelayProportionalToUncachedTokens times cold and warm
// requests with a PrefillDelay large enough to dominate the loopback
// round trip: a cold prompt of ~1000 tokens takes ~20 ms of prefill, a
// warm one (everything but its last words cached) well under half that.
func TestPrefillDelayProportionalToUncachedTokens(t *testing.T) {
	const delay = 20 * time.Microsecond
	ts := newTestServer(t, Config{PrefillDelay: delay})
	salt := "t"
	timed := func(prompt string) (time.Duration, reply) {
		start := time.Now()
		r := post(t, ts, "/v1/chat/completions", saltedBody(prompt, &salt, nil))
		return time.Since(start), r
	}
	// The best of a few tries on each side keeps scheduler noise out.
	var cold, warm time.Duration = time.Hour, time.Hour
	var coldTokens, warmUncached int
	for range 3 {
		prefix := longPrefix(1000)
		d, r := timed(prefix + " q")
		if d < cold {
			cold, coldTokens = d, r.resp.Usage.PromptTokens
		}
		d, r = timed(prefix + " another q")
		k := cachedTokens(t, r)
		if k == 0 {
			t.Fatal("the repeated prefix did not hit")
		}
		if d < warm {
			warm, warmUncached = d, r.resp.Usage.PromptTokens-k
		}
	}
	wantCold := time.Duration(coldTokens) * delay
	if cold < wantCold {
		t.Errorf("cold request took %v, below its prefill time %v (%d tokens)", cold, wantCold, coldTokens)
	}
	if cold > 10*wantCold {
		t.Logf("cold request took %v for %v of prefill: a loaded machine", cold, wantCold)
	}
	if wantWarm := time.Duration(warmUncached) * delay; warm < wantWarm {
		t.Errorf("warm request took %v, below its prefill time %v (%d uncached tokens)", warm, wantWarm, warmUncached)
	}
	if warm > cold/2 {
		t.Errorf("warm request took %v, cold %v: a hit must skip the cached prefix's prefill", warm, cold)
	}
}
