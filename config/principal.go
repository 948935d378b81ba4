package config

import "strings"

// InternalPrefix begins the tenant ids of custody's own principals: the
// admin acting through the API (re-enrollments), the canaries' synthetic
// tenants. Validate refuses configured tenant ids in this namespace, so no
// tenant can be named after one and read what it did.
const InternalPrefix = "custody:"

// Internal principals, as recorded in the ledger and the index.
const (
	AdminPrincipal  = InternalPrefix + "admin"
	CanaryPrincipal = InternalPrefix + "canary"
	// EvalPrincipal is the synthetic tenant of evaluation suites.
	EvalPrincipal = InternalPrefix + "eval"
)

// ReservedTenantID reports whether id is refused for a configured tenant:
// custody's internal namespace, and the names its principals had before
// they moved there (admin, and canary... for the canaries), so that old
// ledger entries cannot be claimed either. Case does not matter.
func ReservedTenantID(id string) bool {
	id = strings.ToLower(id)
	return id == "admin" || strings.HasPrefix(id, InternalPrefix) || strings.HasPrefix(id, "canary") ||
		id == "custody-canary"
}
