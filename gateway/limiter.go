package gateway

import (
	"net"
	"slices"
	"sync"
	"time"

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

// acquire takes a slot for tenant, or fails with rate_limited. The
// caller gives it back with release (a method, not a closure returned:
// that was an allocation a request).
func (l *tenantLimiter) acquire(tenant string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[tenant] >= l.max {
		return &custody.Error{Code: custody.CodeRateLimited, RetryAfter: 1,
			Message: "too many concurrent requests for this tenant; retry shortly"}
	}
	l.n[tenant]++
	return nil
}

// release gives back a slot acquire took for tenant.
func (l *tenantLimiter) release(tenant string) {
	l.mu.Lock()
	if l.n[tenant]--; l.n[tenant] == 0 {
		delete(l.n, tenant)
	}
	l.mu.Unlock()
}

// AuthFailures limits how fast one client may guess admin keys, at the
// admin endpoints and the console login alike: a token bucket per remote
// IP holding PerMinute failures, refilled at PerMinute a minute. While a
// client's bucket is empty every attempt it makes, right key or wrong,
// is refused with 429 and Retry-After, so guessing goes no faster than
// the refill (10 a minute by default, not ~6,600 a second). Clients
// behind one proxy share its IP, and its bucket.
type AuthFailures struct {
	perMinute float64
	now       func() time.Time
	mu        sync.Mutex
	buckets   map[string]*authBucket // by IP; guarded by mu
}

type authBucket struct {
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// maxAuthBuckets bounds the memory of AuthFailures: past it, buckets that
// have refilled completely (they hold nothing) are forgotten, and if all
// are in use the oldest are.
const maxAuthBuckets = 1 << 16

// NewAuthFailures allows perMinute failures a minute per client IP
// (perMinute <= 0: no limit); now nil means time.Now.
func NewAuthFailures(perMinute int, now func() time.Time) *AuthFailures {
	if now == nil {
		now = time.Now
	}
	return &AuthFailures{perMinute: float64(perMinute), now: now, buckets: map[string]*authBucket{}}
}

// Allow reports whether the client at remoteAddr may present a key now;
// if not, how long until it may.
func (a *AuthFailures) Allow(remoteAddr string) (retryAfter time.Duration, ok bool) {
	if a == nil || a.perMinute <= 0 {
		return 0, true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.bucket(clientIP(remoteAddr), false)
	if b == nil || b.tokens >= 1 {
		return 0, true
	}
	return time.Duration((1 - b.tokens) / a.perMinute * float64(time.Minute)), false
}

// Fail counts a wrong key presented by the client at remoteAddr.
func (a *AuthFailures) Fail(remoteAddr string) {
	if a == nil || a.perMinute <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if b := a.bucket(clientIP(remoteAddr), true); b.tokens > 0 {
		b.tokens--
	}
}

// bucket returns ip's bucket refilled to now, creating it if create.
func (a *AuthFailures) bucket(ip string, create bool) *authBucket {
	now := a.now()
	b := a.buckets[ip]
	if b == nil {
		if !create {
			return nil
		}
		if len(a.buckets) >= maxAuthBuckets {
			a.forget(now)
		}
		b = &authBucket{tokens: a.perMinute, at: now}
		a.buckets[ip] = b
		return b
	}
	b.tokens = min(a.perMinute, b.tokens+now.Sub(b.at).Minutes()*a.perMinute)
	b.at = now
	return b
}

// forget drops the buckets that have refilled, or else the older half.
func (a *AuthFailures) forget(now time.Time) {
	for ip, b := range a.buckets {
		if b.tokens+now.Sub(b.at).Minutes()*a.perMinute >= a.perMinute {
			delete(a.buckets, ip)
		}
	}
	if len(a.buckets) < maxAuthBuckets {
		return
	}
	var oldest []time.Time
	for _, b := range a.buckets {
		oldest = append(oldest, b.at)
	}
	slices.SortFunc(oldest, func(x, y time.Time) int { return x.Compare(y) })
	cut := oldest[len(oldest)/2]
	for ip, b := range a.buckets {
		if !b.at.After(cut) {
			delete(a.buckets, ip)
		}
	}
}

// clientIP is the host of a remote address (the address itself if it
// has no port).
func clientIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// retrySeconds rounds a wait up to whole seconds for Retry-After.
func retrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
