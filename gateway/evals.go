package gateway

import (
	"context"
	"fmt"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/internal/routeclient"
)

// EndpointEval is the leaf endpoint of an evaluation run: one leaf a run
// of a suite on a route, beside the leaves of its cases' exchanges.
const EndpointEval = custody.EndpointEval

// evalTenant is the synthetic tenant of eval traffic: in custody's
// internal namespace, like the canaries', so no configured tenant shares
// its receipts, records or cache salt.
var evalTenant = &config.Tenant{ID: config.EvalPrincipal, Policy: canaryPolicy.Name}

// Evals is what the gateway asks of the eval runner (eval.Runner):
// whether a route's current path passed a suite, and to re-run the
// suites covering a route whose path changed.
type Evals interface {
	Passed(suite, model string, route int) bool
	Trigger(model string, route int)
}

// SetEvals hooks the eval runner in: its pass state decides which routes
// a policy with require_evals may use, and a path change re-runs the
// suites covering the route (beside the canaries'). Call it after
// SetCanaries, before serving.
func (g *Gateway) SetEvals(r Evals) {
	g.evals = r
	prev := g.onPath
	g.onPath = func(model string, route int) {
		if prev != nil {
			prev(model, route)
		}
		r.Trigger(model, route)
	}
}

// evalBlock is the first suite that p requires and the route's current
// path has not passed, or "" when p may use the route. Without a runner
// no suite has passed: a policy that requires evals fails closed.
func (g *Gateway) evalBlock(p *config.Policy, model string, route int) string {
	for _, s := range p.RequireEvals {
		if g.evals == nil || !g.evals.Passed(s, model, route) {
			return s
		}
	}
	return ""
}

// quarantineError is the refusal of a route taken out of service for p:
// by its canaries, or by a suite p requires that its path has not passed.
func (g *Gateway) quarantineError(p *config.Policy, model string, rt route) error {
	if s := g.evalBlock(p, model, rt.index); s != "" && (g.health == nil || !g.health.Quarantined(model, rt.index)) {
		return custody.Errorf(custody.CodeRouteQuarantined, "route %s of model %s has not passed evaluation suite %s on its current path (policy %s requires it)",
			rt.cfg.Provider, model, s, p.Name)
	}
	return custody.Errorf(custody.CodeRouteQuarantined, "route %s of model %s is quarantined by its canaries", rt.cfg.Provider, model)
}

// Eval sends an eval case through custody's checks on this route only.
func (c routeClient) Eval(ctx context.Context, body []byte) (routeclient.Answer, error) {
	return c.chat(ctx, body, evalTenant, custody.SenderEval)
}

// RecordEval appends the leaf of an eval run (eval.Report.Transaction:
// the suite's digest, the route, the path tuple the run saw, the pass
// count and every case's outcome digest, no case or answer text), as
// custody:eval on the route's upstream model and region. It returns the
// leaf's request id.
func (g *Gateway) RecordEval(ctx context.Context, tx *custody.Transaction) (string, error) {
	now := g.now()
	tx.ID, tx.Time, tx.Endpoint, tx.Tenant = custody.NewID(now), now.UTC(), EndpointEval, config.EvalPrincipal
	tx.Canary, tx.Sender = true, custody.SenderEval
	if m := g.models[tx.RequestedModel]; m != nil && tx.Route >= 0 && tx.Route < len(m.routes) {
		tx.UpstreamModel, tx.Region = m.routes[tx.Route].cfg.Model, m.routes[tx.Route].prov.Region
	}
	tx.Conclude()
	if err := g.rec.Record(ctx, tx); err != nil {
		return "", fmt.Errorf("recording the eval run: %w", err)
	}
	return tx.ID, nil
}
