package gateway

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody/config"
)

// TestCanaryTenantIDs: every synthetic canary tenant lives in custody's
// internal namespace, and the cache probe's two stay two tenants (their
// prompt-cache salts must differ).
func TestCanaryTenantIDs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", config.CanaryPrincipal},
		{"custody-canary", config.CanaryPrincipal},
		{"cache-a", config.CanaryPrincipal + ":cache-a"},
		{"cache-b", config.CanaryPrincipal + ":cache-b"},
		{config.CanaryPrincipal + ":x", config.CanaryPrincipal + ":x"},
	} {
		got := canaryTenantID(tc.in)
		if got != tc.want || !strings.HasPrefix(got, config.InternalPrefix) {
			t.Errorf("canaryTenantID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
