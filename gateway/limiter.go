package gateway

import (
	"sync"

	"github.com/custody-gateway/custody"
)

// tenantLimiter bounds in-flight requests per tenant, so one tenant
// cannot take every upstream connection and goroutine.
type tenantLimiter struct {
	max int
	mu  sync.Mutex
	n   map[string]int // in-flight per tenant; guarded by mu
}

func newTenantLimiter(max int) *tenantLimiter {
	return &tenantLimiter{max: max, n: map[string]int{}}
}

// acquire takes a slot for tenant, or fails with rate_limited.
func (l *tenantLimiter) acquire(tenant string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[tenant] >= l.max {
		return nil, &custody.Error{Code: custody.CodeRateLimited, RetryAfter: 1,
			Message: "too many concurrent requests for this tenant; retry shortly"}
	}
	l.n[tenant]++
	return func() {
		l.mu.Lock()
		if l.n[tenant]--; l.n[tenant] == 0 {
			delete(l.n, tenant)
		}
		l.mu.Unlock()
	}, nil
}
