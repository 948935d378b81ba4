package gateway

import (
	"testing"

	"github.com/custody-gateway/custody/config"
)

// TestInternalPrincipalsAreReserved: every tenant id custody acts as on
// its own (re-enrollment by the admin, canary probes) is one config
// refuses, so no configured tenant can read what they did.
func TestInternalPrincipalsAreReserved(t *testing.T) {
	for _, id := range []string{config.AdminPrincipal, canaryTenant("").ID, canaryTenant("custody-canary").ID, canaryTenant("acme").ID} {
		if !config.ReservedTenantID(id) {
			t.Errorf("internal principal %q is not reserved", id)
		}
		_, err := config.Parse("f.yaml", []byte("tenants: [{id: \""+id+"\", api_keys: [k]}]\n"), func(string) (string, bool) { return "", false })
		if err == nil {
			t.Errorf("a config can name a tenant %q", id)
		}
	}
	if got := canaryTenant("acme").ID; got != config.CanaryPrincipal+":acme" {
		t.Errorf("a probe's tenant acme is %q, want it inside custody's namespace", got)
	}
}
