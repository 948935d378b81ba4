package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/canary"
)

// TestQuarantineAndRecovery: canaries that fail on a route quarantine it
// (traffic falls back where policy allows, 503 route_quarantined where
// not); passing runs bring it back.
func TestQuarantineAndRecovery(t *testing.T) {
	h := newHarness(t, policyConfig)
	runner, err := canary.New(context.Background(), canary.Config{Routes: canary.Routes(h.gw.Routes()), Probes: []string{canary.ProbeEcho}})
	if err != nil {
		t.Fatal(err)
	}
	h.gw.SetCanaries(runner)
	ask := func(useCase string) *http.Response {
		resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", useCase)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", useCase, resp.StatusCode, body)
		}
		return resp
	}
	// The primary stops answering what it is asked (it forgets the nonce).
	h.primary.mutate = func(m map[string]any, _ *http.Request) {
		m["choices"] = []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "I cannot recall."}}}
	}
	for range 2 {
		runner.RunOnce(context.Background())
	}
	if !runner.Quarantined("big", 0) {
		t.Fatalf("two failing runs did not quarantine the route: %+v", runner.Last())
	}
	if resp := ask("summaries"); resp.Header.Get("Custody-Fallback") != "primary>backup" {
		t.Errorf("quarantined primary still served: %v", resp.Header)
	}
	calls := h.primary.calls.Load()
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false))
	if resp.StatusCode != 200 || h.primary.calls.Load() != calls {
		t.Errorf("the tenant's default policy reached the quarantined route: %d %s", resp.StatusCode, body)
	}

	h.primary.mutate = nil
	for range 2 {
		runner.RunOnce(context.Background())
	}
	if runner.Quarantined("big", 0) {
		t.Fatalf("two passing runs did not bring the route back: %+v", runner.Last())
	}
	if resp := ask("summaries"); resp.Header.Get("Custody-Provider") != "primary" {
		t.Errorf("recovered primary not used: %v", resp.Header)
	}
}

func TestQuarantinedWithoutFallbackIs503(t *testing.T) {
	h := newHarness(t, `
tenants: [{id: acme, api_keys: [sk-acme], policy: pinned}]
providers:
  - {name: primary, kind: openai, base_url: "PRIMARY"}
  - {name: backup, kind: openai, base_url: "BACKUP"}
models:
  - name: big
    context_window: 10000
    routes: [{provider: primary}, {provider: backup}]
policies:
  - {name: pinned, fallback: deny}
`)
	runner, err := canary.New(context.Background(), canary.Config{Routes: canary.Routes(h.gw.Routes()), Probes: []string{canary.ProbeEcho}})
	if err != nil {
		t.Fatal(err)
	}
	h.gw.SetCanaries(runner)
	h.primary.mutate = func(m map[string]any, _ *http.Request) {
		m["choices"] = []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"content": "no"}}}
	}
	for range 2 {
		runner.RunOnce(context.Background())
	}
	h.primary.mutate = nil
	backupCalls := h.backup.calls.Load() // the canaries probed it too
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false))
	if resp.StatusCode != 503 || errCode(t, body) != string(custody.CodeRouteQuarantined) || h.backup.calls.Load() != backupCalls {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// TestPathChangeTriggersConfiguredCanariesOnly: a new path triggers the
// route's canaries when canaries are configured, and sends no synthetic
// traffic when they are not.
func TestPathChangeTriggersConfiguredCanariesOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		extra  string
		probes bool
	}{
		{"not configured", "", false},
		{"configured", "canaries: {probes: [echo]}\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.extra+policyConfig)
			runner, err := canary.New(context.Background(), canary.Config{Routes: canary.Routes(h.gw.Routes()), Probes: []string{canary.ProbeEcho}})
			if err != nil {
				t.Fatal(err)
			}
			h.gw.SetCanaries(runner)
			h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "summaries")
			// The trigger is asynchronous: where it should run, wait
			// for its report; where it should not, give it the time it
			// would take (a wait that can only make this pass late,
			// never fail falsely).
			if tc.probes {
				for deadline := time.Now().Add(60 * time.Second); len(runner.Last()) == 0 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
			} else {
				time.Sleep(100 * time.Millisecond)
			}
			runner.Wait()
			if got := len(runner.Last()) > 0; got != tc.probes {
				t.Fatalf("canaries ran = %v, want %v", got, tc.probes)
			}
		})
	}
}
