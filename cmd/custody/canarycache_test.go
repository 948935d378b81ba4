package main

import (
	"strings"
	"testing"
)

// TestCanaryCacheProbeThroughTheBinary: `custody canary` with the cache
// probe, through custody's own per-tenant salts. The honest simulator
// passes; a cache that ignores the salt (shared-cache), one that leaks
// only in its timing (shared-cache-timing) and a provider custody does
// not salt (cache_isolation: off) fail with cache_shared; a provider
// whose cache custody disables leaves the probe blind (inconclusive).
func TestCanaryCacheProbeThroughTheBinary(t *testing.T) {
	t.Parallel() // its own data dir and ports
	if testing.Short() {
		t.Skip("64 requests of a few hundred tokens per case")
	}
	dir := t.TempDir()
	config := func(isolation, fault string) string {
		// 40 µs a token makes a cold prefix about 15 ms slower than a
		// warm one, which the counts of cached_tokens do not need. The
		// case that only timing can tell (shared-cache-timing) runs on
		// the wall clock of a machine whose scheduler may be tens of ms
		// late, so it takes 500 µs a token: about 190 ms between a cold
		// and a warm prefix, a margin no load short of a stall closes
		// (the statistic's own margins are tested on a model clock in
		// canary/cache_test.go).
		sim := "prefill_delay: 40us"
		if fault == "shared-cache-timing" {
			sim = "prefill_delay: 500us"
		}
		if fault != "" {
			sim += ", faults: [" + fault + "]"
		}
		return `
tenants: [{id: acme, api_keys: [sk-acme]}]
canaries: {probes: [cache]}
providers:
  - {name: up, kind: sim, request_id_echo: x-request-id, cache_isolation: ` + isolation + `, sim: {` + sim + `}}
models:
  - {name: sim-1, context_window: 8192, routes: [{provider: up}]}
`
	}
	for _, tc := range []struct {
		name, isolation, fault string
		code                   int
		result, evidence       string
	}{
		{"honest", "tenant", "", 0, "ok", "16 pairs isolated"},
		{"honest, per use case", "tenant_use_case", "", 0, "ok", "16 pairs isolated"},
		{"shared-cache", "tenant", "shared-cache", 1, "FAIL cache_shared", "reported cached"},
		{"shared-cache-timing", "tenant", "shared-cache-timing", 1, "FAIL cache_shared", "timing"},
		{"no salt", "off", "", 1, "FAIL cache_shared", "reported cached"},
		{"cache disabled: blind", "disable", "", 0, "inconclusive", "no cache hit for the same tenant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, dir, "canary", "--config", writeConfig(t, dir, config(tc.isolation, tc.fault)))
			if code != tc.code || !strings.Contains(out, tc.result) || !strings.Contains(out, tc.evidence) {
				t.Errorf("exit %d, want %d with %q and %q:\n%s\n%s", code, tc.code, tc.result, tc.evidence, out, errOut)
			}
		})
	}
}
