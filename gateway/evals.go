package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/eval"
)

// EndpointEval is the leaf endpoint of an evaluation run: one leaf a run
// of a suite on a route, beside the leaves of its cases' exchanges.
const EndpointEval = custody.EndpointEval

// Check names of an eval leaf's outcomes: the run, then each case.
const (
	CheckEval     = "eval"
	CheckEvalCase = "eval_case"
)

// evalTenant is the synthetic tenant of eval traffic: in custody's
// internal namespace, like the canaries', so no configured tenant shares
// its receipts, records or cache salt.
var evalTenant = &config.Tenant{ID: config.EvalPrincipal, Policy: canaryPolicy.Name}

// EvalRoutes are the gateway's routes as eval targets: each case runs
// through custody's own pipeline on exactly that route (routeClient), as
// custody:eval, under the canaries' policy (one route, no fallback).
func (g *Gateway) EvalRoutes() []eval.Route {
	var out []eval.Route
	for _, c := range g.routeClients() {
		out = append(out, eval.Route{Model: c.m.cfg.Name, Index: c.rt.index, Target: &evalTarget{c}})
	}
	return out
}

// SetEvals hooks the eval runner in: its pass state decides which routes
// a policy with require_evals may use, and a path change re-runs the
// suites covering the route (beside the canaries'). Call it after
// SetCanaries, before serving.
func (g *Gateway) SetEvals(r *eval.Runner) {
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

type evalTarget struct{ routeClient }

// Chat sends the case through custody's checks on this route only.
func (t *evalTarget) Chat(ctx context.Context, req eval.Request) (eval.Result, error) {
	body, err := req.Body(t.m.cfg.Name)
	if err != nil {
		return eval.Result{}, err
	}
	a, err := t.chat(ctx, body, evalTenant, "eval")
	if err != nil {
		return eval.Result{}, err
	}
	return eval.Result{Status: a.status, Body: a.body, Code: a.code}, nil
}

// RecordEval appends the run's leaf: the suite's digest, the route, the
// path tuple the run saw, the pass count and every case's outcome digest,
// no case or answer text. It returns the leaf's request id.
func (g *Gateway) RecordEval(ctx context.Context, rep eval.Report) (string, error) {
	now := g.now()
	tx := &custody.Transaction{ID: custody.NewID(now), Time: now.UTC(), Endpoint: EndpointEval, Tenant: config.EvalPrincipal, Canary: true,
		RequestedModel: rep.Model, Provider: rep.Path.Provider, ResponseModel: custody.Bound(rep.Path.Model), Fingerprint: custody.Bound(rep.Path.Fingerprint),
		Route: rep.Index, Policy: "eval", Decision: "failed", Status: http.StatusOK,
		PromptTokensLocal: -1, PromptTokensReported: rep.PromptTokens, CompletionTokens: rep.CompletionTokens, Duration: rep.Duration}
	if m := g.models[rep.Model]; m != nil && rep.Index >= 0 && rep.Index < len(m.routes) {
		tx.UpstreamModel, tx.Region = m.routes[rep.Index].cfg.Model, m.routes[rep.Index].prov.Region
	}
	// A failing run is an alarm on the route, not a refused request: its
	// outcomes are flagged, so Conclude makes the leaf flagged.
	status := custody.StatusFlagged
	if rep.OK {
		tx.Decision, status = "passed", custody.StatusOK
	}
	tx.Outcomes = append(tx.Outcomes, custody.Outcome{Check: CheckEval, Status: status, Detail: evalDetail(rep)})
	for _, c := range rep.Cases {
		o := custody.Outcome{Check: CheckEvalCase, Status: custody.StatusOK, Detail: c.ID + " " + c.Digest}
		if !c.Pass {
			o.Status, o.Code = custody.StatusFlagged, custody.Code(c.Code)
		}
		tx.Outcomes = append(tx.Outcomes, o)
	}
	tx.Conclude()
	if err := g.rec.Record(ctx, tx); err != nil {
		return "", fmt.Errorf("recording the eval run: %w", err)
	}
	return tx.ID, nil
}

// evalDetail is the run's outcome detail, as the leaf and the event say
// it: suite, its digest, the count, the threshold, why it ran, the
// baseline and the failing cases by id.
func evalDetail(rep eval.Report) string {
	base := "none"
	if b := rep.Baseline; b != nil {
		base = b.Time.UTC().Format("2006-01-02T15:04:05Z")
		if b.Recorded {
			base = "recorded"
		}
	}
	d := fmt.Sprintf("suite=%s sha256=%s passed=%d/%d threshold=%.2f trigger=%s baseline=%s regressed=%d",
		rep.Suite, rep.SuiteDigest, rep.Passed, rep.Total, rep.Threshold, rep.Trigger, base, len(rep.Regressions))
	if rep.PathMoved {
		d += " path_moved=true"
	}
	if f := rep.Failing(); len(f) > 0 {
		if len(f) > 20 {
			f = append(f[:20:20], "…")
		}
		d += " failing=" + strings.Join(f, ",")
	}
	return d
}
