package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

const policyConfig = `
tenants:
  - id: acme
    api_keys: [sk-acme]
    use_cases: {summaries: anywhere, code-generation: eu-pinned}
providers:
  - {name: primary, kind: openai, base_url: "PRIMARY", region: us-east-1, timeout: 2s, breaker_threshold: 2, breaker_cooldown: 300ms}
  - {name: backup, kind: openai, base_url: "BACKUP", region: eu-west-1, timeout: 2s}
models:
  - name: big
    context_window: 10000
    routes:
      - {provider: primary, model: big-0827}
      - {provider: backup, model: big-0827}
policies:
  - {name: anywhere, fallback: allow}
  - {name: eu-pinned, fallback: deny, regions: [eu-west-1], require_pinned: true}
`

func TestRegionSelectsRouteWithoutFallback(t *testing.T) {
	h := newHarness(t, policyConfig)
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "code-generation")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Custody-Provider") != "backup" || resp.Header.Get("Custody-Fallback") != "none" {
		t.Errorf("headers %v", resp.Header)
	}
	if h.primary.calls.Load() != 0 {
		t.Error("a route outside the policy's regions was called")
	}
	if tx := h.rec.last(t); tx.Policy != "eu-pinned" || tx.UseCase != "code-generation" || tx.Region != "eu-west-1" {
		t.Errorf("recorded %+v", tx)
	}
}

func TestPinnedRefusesAliasDrift(t *testing.T) {
	h := newHarness(t, strings.Replace(policyConfig, "{provider: backup, model: big-0827}", "{provider: backup, model: big-0827, accept: [big-0827, big-0901]}", 1))
	h.backup.mutate = func(m map[string]any, _ *http.Request) { m["model"] = "big-0901" }
	// Accepted by the route for summaries...
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "code-generation")
	if resp.StatusCode != 502 || errCode(t, body) != string(custody.CodeModelMismatch) {
		t.Fatalf("pinned policy served drifted model: %d %s", resp.StatusCode, body)
	}
	h.primary.status = 503
	resp, body = h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "summaries")
	if resp.StatusCode != 200 || resp.Header.Get("Custody-Model") != "big-0901" {
		t.Fatalf("unpinned policy: %d %s", resp.StatusCode, body)
	}
}

func TestBreakerOpensAndRecovers(t *testing.T) {
	h := newHarness(t, policyConfig)
	h.primary.status = 500
	for range 2 {
		resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "summaries")
		if resp.StatusCode != 200 || resp.Header.Get("Custody-Fallback") != "primary>backup" {
			t.Fatalf("%d %s %v", resp.StatusCode, body, resp.Header)
		}
	}
	calls := h.primary.calls.Load()
	resp, _ := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "summaries")
	if resp.StatusCode != 200 || h.primary.calls.Load() != calls {
		t.Fatalf("breaker did not open: primary called again (%d)", h.primary.calls.Load())
	}
	if resp.Header.Get("Custody-Fallback") != "primary>backup" {
		t.Errorf("a skipped primary is still a fallback: %q", resp.Header.Get("Custody-Fallback"))
	}
	h.primary.status = 0
	time.Sleep(350 * time.Millisecond)
	resp, _ = h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "summaries")
	if resp.StatusCode != 200 || resp.Header.Get("Custody-Provider") != "primary" {
		t.Fatalf("breaker did not recover through a half-open probe: %v", resp.Header)
	}
}

func TestDeniedFallbackNamesPrimaryFailure(t *testing.T) {
	h := newHarness(t, strings.Replace(policyConfig, "regions: [eu-west-1], ", "", 1))
	h.primary.status = 503
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "code-generation")
	if resp.StatusCode != 503 || errCode(t, body) != string(custody.CodeFallbackNotPermitted) || !strings.Contains(body, "primary") || !strings.Contains(body, "HTTP 503") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if h.backup.calls.Load() != 0 {
		t.Error("fallback taken against policy")
	}
}
