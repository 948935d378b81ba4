package config

import (
	"strings"
	"testing"
)

// TestResponsesCacheIsolationRefused: a provider that passes Responses
// through cannot have its prompt cache isolated (nothing custody sets in
// a Responses body would isolate it), so the combination is refused at
// load, not accepted and ignored.
func TestResponsesCacheIsolationRefused(t *testing.T) {
	for _, iso := range []string{"tenant", "tenant_use_case", "disable", "off"} {
		yaml := "tenants:\n  - {id: a, api_keys: [k]}\nproviders:\n  - {name: p, kind: sim, responses: true, cache_isolation: " + iso +
			"}\nmodels:\n  - {name: m, context_window: 10, routes: [{provider: p}]}\n"
		_, err := Parse("t.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
		if refused := err != nil && strings.Contains(err.Error(), "providers[0].cache_isolation"); refused != (iso != "off") {
			t.Errorf("cache_isolation %s with responses: true: %v", iso, err)
		}
	}
}
