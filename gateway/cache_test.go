package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/custody-gateway/custody"
)

// TestCacheIsolation: an isolating provider gets custody's per-tenant
// salt on every request (different for two tenants, the same for one
// tenant's requests, never the client's own), and a cached_tokens hit
// that only another tenant's prompt explains is flagged cache_shared,
// while the same tenant's own hit is not.
func TestCacheIsolation(t *testing.T) {
	h := newHarness(t, strings.Replace(testConfig, "timeout: 2s, api_key: sk-upstream-secret}",
		"timeout: 2s, api_key: sk-upstream-secret, cache_isolation: tenant}", 1))
	// The upstream's cache ignores the salt: a prompt seen before, from
	// anyone, is all cached.
	var mu sync.Mutex
	seen := map[string]bool{}
	var salts []string
	h.primary.mutate = func(resp map[string]any, r *http.Request) {
		var req struct {
			Salt     *string `json:"cache_salt"`
			Messages []struct{ Content string }
		}
		json.Unmarshal(*h.primary.body.Load(), &req)
		mu.Lock()
		defer mu.Unlock()
		salt := "<none>"
		if req.Salt != nil {
			salt = *req.Salt
		}
		salts = append(salts, salt)
		u := resp["usage"].(map[string]any)
		cached := 0
		if seen[req.Messages[0].Content] {
			cached = u["prompt_tokens"].(int)
		}
		seen[req.Messages[0].Content] = true
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": cached}
	}
	prompt := strings.Repeat("A long shared instruction, the same for everyone. ", 12)
	send := func(key, body string) (string, string) {
		resp, out := h.do("POST", "/v1/chat/completions", key, body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, out)
		}
		return resp.Header.Get("Custody-Verdict"), resp.Header.Get("Custody-Checks")
	}
	withSalt := func(s string) string {
		b, _ := json.Marshal(map[string]any{"model": "small", "cache_salt": s, "messages": []any{map[string]any{"role": "user", "content": prompt}}})
		return string(b)
	}
	if v, c := send("sk-acme", chat("small", prompt, false)); v != "verified" || !strings.Contains(c, "cache=ok") {
		t.Errorf("first request: %s %s", v, c)
	}
	if v, c := send("sk-acme", withSalt("the-victims-salt")); v != "verified" || !strings.Contains(c, "cache=ok") {
		t.Errorf("the same tenant's own cache hit: %s %s", v, c)
	}
	if v, c := send("sk-beta", chat("small", prompt, false)); v != string(custody.Flagged) || !strings.Contains(c, "cache=cache_shared") {
		t.Errorf("another tenant's cached prefix: %s %s", v, c)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(salts) != 3 || salts[0] != salts[1] || salts[0] == salts[2] || !strings.HasPrefix(salts[0], "custody-") || salts[1] == "the-victims-salt" {
		t.Errorf("salts seen upstream: %q", salts)
	}
	if n := h.rec.last(t); n.Verdict != custody.Flagged || n.Code != custody.CodeCacheShared {
		t.Errorf("recorded %s %s", n.Verdict, n.Code)
	}
}

// cacheSharedHealth is canaries' verdict that every route's prompt cache
// is shared, and that nothing else is wrong.
type cacheSharedHealth struct{}

func (cacheSharedHealth) Quarantined(string, int) bool { return false }
func (cacheSharedHealth) CacheShared(string, int) bool { return true }

// TestCacheSharedQuarantinesByPolicy: a route whose cache canary failed
// is out of service for a policy with on_cache_shared: quarantine, and
// still serves one with the default flag.
func TestCacheSharedQuarantinesByPolicy(t *testing.T) {
	cfg := strings.Replace(testConfig, "use_cases: {code: strict}", "use_cases: {code: strict, private: sealed}", 1)
	cfg = strings.Replace(cfg, "policies:\n", "policies:\n  - {name: sealed, on_cache_shared: quarantine}\n", 1)
	h := newHarness(t, cfg)
	h.gw.health = cacheSharedHealth{}
	if resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false)); resp.StatusCode != 200 {
		t.Errorf("default policy (flag): %d %s", resp.StatusCode, body)
	}
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false), "Custody-Use-Case", "private")
	if resp.StatusCode != http.StatusServiceUnavailable || errCode(t, body) != "route_quarantined" {
		t.Errorf("on_cache_shared: quarantine: %d %s", resp.StatusCode, body)
	}
}
