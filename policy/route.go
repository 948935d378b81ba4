package policy

import (
	"errors"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

// Step is what a request does next on its way along its model's routes.
type Step struct {
	// Route is the index of the route to take next, or -1: the request
	// ends with Err.
	Route int
	// Skip, when set, says why the route is taken but not attempted
	// (canaries quarantined it): it fails at once with route_quarantined.
	Skip Skip
	// Fallback is set when the route is not the first taken: the retry
	// budget must allow it, or the request ends with its last failure.
	Fallback bool
	Err      error
}

// Next decides the routing of one request under policy p, in the order
// of the model's routes: which route to take next, given the failures of
// the routes taken so far (failures[0] is the primary's), or what the
// request ends with. It is the one place where fallback_not_permitted is
// made. Routes outside p's regions are never taken; moving past the first
// eligible route is a fallback, which p may forbid. A primary that failed
// with route_quarantined or context_length_exceeded (the prompt's fault,
// not the route's) ends a request that may not fall back with that
// failure itself.
func Next(p *config.Policy, model string, routes []Route, failures []error) Step {
	var eligible []int
	for i, r := range routes {
		if Eligible(p, r) {
			eligible = append(eligible, i)
		}
	}
	n := len(failures)
	if n == 0 {
		if len(eligible) == 0 {
			return Step{Route: -1, Err: notPermitted(p, "permits none of the routes of model "+model, "", nil)}
		}
		return take(routes, eligible[0], false)
	}
	primary, last := failures[0], failures[n-1]
	code := custody.CodeOf(primary)
	final := code == custody.CodeRouteQuarantined || code == custody.CodeContextLengthExceeded
	first := routes[eligible[0]].Provider
	switch {
	case n < len(eligible) && MayFallback(p):
		return take(routes, eligible[n], true)
	case n < len(eligible) && final:
		return Step{Route: -1, Err: primary}
	case n < len(eligible):
		return Step{Route: -1, Err: notPermitted(p, "forbids fallback", first, primary)}
	case len(eligible) < len(routes) && !final:
		// Routes were left that the regions exclude: the request failed
		// because of the policy, and says so.
		return Step{Route: -1, Err: notPermitted(p, "permits no other route", first, primary)}
	}
	return Step{Route: -1, Err: last}
}

func take(routes []Route, i int, fallback bool) Step {
	s := Step{Route: i, Fallback: fallback}
	if routes[i].Quarantined {
		s.Skip = SkipQuarantined
	}
	return s
}

// notPermitted is fallback_not_permitted: policy p <why>, and what the
// primary route's failure was, if it failed.
func notPermitted(p *config.Policy, why, primary string, cause error) error {
	msg := "policy " + p.Name + " " + why
	if cause != nil {
		m := "internal error"
		var e *custody.Error
		if errors.As(cause, &e) {
			m = e.Message
		}
		msg += "; the primary route (" + primary + ") failed: " + m
	}
	return &custody.Error{Code: custody.CodeFallbackNotPermitted, Err: cause, Message: msg}
}
