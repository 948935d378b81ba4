package main

import (
	"strings"
	"testing"
)

// TestCacheIsolationThroughTheBinary: with cache_isolation: tenant, the
// simulator's prefix cache (keyed by custody's salt) serves a tenant its
// own prefix and never another's, and custody passes that; with the
// shared-cache fault (the cache ignores the salt) the second tenant's hit
// is flagged cache_shared.
func TestCacheIsolationThroughTheBinary(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	cfg := `tenants:
  - {id: acme, api_keys: [sk-acme]}
  - {id: beta, api_keys: [sk-beta]}
providers:
  - {name: honest, kind: sim, request_id_echo: x-request-id, cache_isolation: tenant}
  - {name: shared, kind: sim, request_id_echo: x-request-id, cache_isolation: tenant, sim: {faults: [shared-cache]}}
models:
  - {name: m-honest, context_window: 32768, routes: [{provider: honest, model: sim-1}]}
  - {name: m-shared, context_window: 32768, routes: [{provider: shared, model: sim-1}]}
`
	s := startServe(t, dir, "--config", writeConfig(t, dir, cfg))
	prompt := strings.Repeat("The shared system instructions every tenant of this deployment sends first. ", 30)
	ask := func(key, model string) (verdict, checks string) {
		resp, body := post(t, s.URL+"/v1/chat/completions", key, chatBody(model, prompt+"Question "+key, false))
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", key, model, resp.StatusCode, body)
		}
		return resp.Header.Get("Custody-Verdict"), resp.Header.Get("Custody-Checks")
	}
	for _, step := range []struct {
		key, model, verdict, check string
	}{
		{"sk-acme", "m-honest", "verified", "cache=ok"},
		{"sk-acme", "m-honest", "verified", "cache=ok"}, // its own prefix, cached
		{"sk-beta", "m-honest", "verified", "cache=ok"}, // another salt: a miss
		{"sk-acme", "m-shared", "verified", "cache=ok"},
		{"sk-beta", "m-shared", "flagged", "cache=cache_shared"}, // acme's prefix, served to beta
	} {
		v, c := ask(step.key, step.model)
		if v != step.verdict || !strings.Contains(c, step.check) {
			t.Errorf("%s on %s: %s %s, want %s with %s", step.key, step.model, v, c, step.verdict, step.check)
		}
	}
}
