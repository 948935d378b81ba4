// Package policy decides, with pure functions, which routes a request may
// take and what happens when one fails: custody makes the effective
// execution path a policy decision, not an accident.
//
// A policy's regions select the routes a request may use at all; its
// fallback setting says whether a request may move to another route
// after the first one it tried failed (or could not be tried because its
// breaker is open or canaries quarantined it).
package policy

import (
	"errors"
	"slices"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

// Route is what the policy needs to know about one route right now.
type Route struct {
	Provider    string
	Region      string
	Quarantined bool // canaries found it broken
	BreakerOpen bool // its provider's circuit breaker is open
}

// Skip says why a route is not tried.
type Skip string

const (
	SkipNone        Skip = ""
	SkipQuarantined Skip = "quarantined"
	SkipBreakerOpen Skip = "breaker_open"
)

// Eligible reports whether a request under p may use r at all: its
// region is allowed. Regions are a hard rule, never a fallback matter.
func Eligible(p *config.Policy, r Route) bool {
	return len(p.Regions) == 0 || slices.Contains(p.Regions, r.Region)
}

// Healthy reports why an eligible route cannot be tried now, if so.
func Healthy(r Route) Skip {
	switch {
	case r.Quarantined:
		return SkipQuarantined
	case r.BreakerOpen:
		return SkipBreakerOpen
	}
	return SkipNone
}

// MayFallback reports whether, after the first eligible route failed or
// was unhealthy, p lets the request move on.
func MayFallback(p *config.Policy) bool { return p.Fallback == "allow" }

// Retriable reports whether an attempt's failure may move the request to
// the next route: transport failures, timeouts, 5xx and 429 (all
// upstream_unavailable or upstream_timeout), and the upstream's own
// refusal of the prompt as too long. A refusal caused by the request
// itself (any other 4xx) and every integrity failure are final: custody
// fails closed rather than shop for an answer that passes.
func Retriable(err error) bool {
	var e *custody.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case custody.CodeUpstreamUnavailable, custody.CodeUpstreamTimeout:
		return true
	case custody.CodeContextLengthExceeded:
		return e.HTTPStatus != 0 // the upstream's refusal (custody's own preflight has no upstream status)
	}
	return false
}
