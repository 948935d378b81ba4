package gateway

import (
	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/policy"
)

// forward takes the model's routes as the policy decides (policy.Next)
// and finishes the exchange with the first upstream that answers. A
// quarantined route, or one whose breaker is open, is taken and fails at
// once; a retriable failure moves on, within the retry budget.
func (x *exchange) forward() error {
	g, tx := x.g, x.tx
	now := g.now()
	g.budget.Request(now)
	routes := x.model.routes
	if x.probe != nil {
		// A canary probes its one route, whatever its health: that is how
		// a quarantined route is seen to recover.
		routes = routes[x.probe.route : x.probe.route+1]
	}
	var room [4]policy.Route // most models have a few routes: no allocation for them
	states := room[:0]
	if len(routes) > len(room) {
		states = make([]policy.Route, 0, len(routes))
	}
	states = states[:len(routes)]
	for i, rt := range routes {
		states[i] = policy.Route{Provider: rt.cfg.Provider, Region: rt.prov.Region}
		if x.probe == nil {
			states[i].Quarantined = g.health != nil && (g.health.Quarantined(x.model.cfg.Name, rt.index) ||
				x.policy.OnCacheShared == "quarantine" && cacheShared(g.health, x.model.cfg.Name, rt.index))
			states[i].Quarantined = states[i].Quarantined || g.evalBlock(x.policy, x.model.cfg.Name, rt.index) != ""
		}
	}
	var failures []error
	for {
		step := policy.Next(x.policy, x.model.cfg.Name, states, failures)
		if step.Route < 0 {
			return step.Err
		}
		if step.Fallback && !g.budget.Retry(now) {
			return failures[len(failures)-1]
		}
		rt := routes[step.Route]
		if tx.FallbackChain == nil {
			tx.FallbackChain = x.chain[:0] // the exchange's room (nil until a route is taken)
		}
		tx.FallbackChain = append(tx.FallbackChain, rt.cfg.Provider)
		tx.Provider, tx.Region, tx.UpstreamModel, tx.Route = rt.cfg.Provider, rt.prov.Region, rt.cfg.Model, rt.index
		tx.Decision = "primary"
		if step.Fallback {
			tx.Decision = "fallback"
		}
		var err error
		switch {
		case step.Skip == policy.SkipQuarantined:
			err = g.quarantineError(x.policy, x.model.cfg.Name, rt)
		case x.probe == nil && !rt.client.Breaker().Allow(now):
			err = custody.Errorf(custody.CodeUpstreamUnavailable, "provider %s is failing; its circuit breaker is open", rt.cfg.Provider)
		default:
			var done bool
			done, err = x.attempt(rt)
			if done || err == nil {
				rt.client.Breaker().Success()
				return err
			}
			if !policy.Retriable(err) {
				return err
			}
			if custody.CodeOf(err) != custody.CodeContextLengthExceeded {
				// An upstream that refused an over-long prompt is healthy.
				rt.client.Breaker().Failure(g.now(), retryAfter(err))
			}
		}
		failures = append(failures, err)
	}
}
