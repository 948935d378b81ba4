package policy

import (
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

func TestEligibleAndHealthy(t *testing.T) {
	eu := &config.Policy{Regions: []string{"eu-west-1"}}
	any := &config.Policy{}
	for _, tc := range []struct {
		name    string
		p       *config.Policy
		r       Route
		elig    bool
		healthy Skip
	}{
		{"any region", any, Route{Region: "us-east-1"}, true, SkipNone},
		{"eu only, us route", eu, Route{Region: "us-east-1"}, false, SkipNone},
		{"eu only, eu route", eu, Route{Region: "eu-west-1"}, true, SkipNone},
		{"eu only, unlabelled route", eu, Route{}, false, SkipNone},
		{"quarantined", any, Route{Quarantined: true, BreakerOpen: true}, true, SkipQuarantined},
		{"breaker open", any, Route{BreakerOpen: true}, true, SkipBreakerOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Eligible(tc.p, tc.r); got != tc.elig {
				t.Errorf("Eligible = %v", got)
			}
			if got := Healthy(tc.r); got != tc.healthy {
				t.Errorf("Healthy = %q", got)
			}
		})
	}
	if !MayFallback(&config.Policy{Fallback: "allow"}) || MayFallback(&config.Policy{Fallback: "deny"}) {
		t.Error("MayFallback")
	}
}

func TestRetriable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"unreachable", custody.Errorf(custody.CodeUpstreamUnavailable, "x"), true},
		{"timeout", custody.Errorf(custody.CodeUpstreamTimeout, "x"), true},
		{"upstream context refusal", &custody.Error{Code: custody.CodeContextLengthExceeded, HTTPStatus: 400}, true},
		{"custody's own preflight", custody.Errorf(custody.CodeContextLengthExceeded, "x"), false},
		{"request's own 4xx", &custody.Error{Code: custody.CodeUpstreamRejected, HTTPStatus: 422}, false},
		{"integrity failure", custody.Errorf(custody.CodeModelMismatch, "x"), false},
		{"not a custody error", context(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Retriable(tc.err); got != tc.want {
				t.Errorf("Retriable = %v", got)
			}
		})
	}
}

func context() error { return errString("context canceled") }

type errString string

func (e errString) Error() string { return string(e) }

func TestBudget(t *testing.T) {
	b := NewBudget(0.2, 0)
	now := time.Unix(100, 0)
	for range 100 {
		b.Request(now)
	}
	n := 0
	for b.Retry(now) {
		n++
	}
	if n != 20 {
		t.Fatalf("%d retries for 100 requests at 20%%", n)
	}
	// Ten seconds later the window has forgotten them.
	later := now.Add(11 * time.Second)
	if b.Retry(later) {
		t.Fatal("retry allowed with no requests in the window")
	}
	floor := NewBudget(0.2, 1)
	if !floor.Retry(later) {
		t.Fatal("the per-second floor allows a retry with no traffic")
	}
}
