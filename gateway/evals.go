package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
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
// through custody's own pipeline on exactly that route, as custody:eval,
// under the canaries' policy (one route, no fallback).
func (g *Gateway) EvalRoutes() []eval.Route {
	var out []eval.Route
	for i := range g.cfg.Models {
		m := g.models[g.cfg.Models[i].Name]
		for _, rt := range m.routes {
			out = append(out, eval.Route{Model: m.cfg.Name, Index: rt.index, Target: &evalTarget{g: g, m: m, rt: rt}})
		}
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

type evalTarget struct {
	g  *Gateway
	m  *model
	rt route
}

func (t *evalTarget) Name() string { return t.m.cfg.Name + "/" + t.rt.cfg.Provider }

// Chat sends the case through custody's checks on this route only.
func (t *evalTarget) Chat(ctx context.Context, req eval.Request) (eval.Result, error) {
	body, err := req.Body(t.m.cfg.Name)
	if err != nil {
		return eval.Result{}, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return eval.Result{}, err
	}
	r.RemoteAddr = "eval"
	w := &memoryWriter{header: http.Header{}}
	tx := t.g.serve(openaiChat, w, r, &canaryProbe{tenant: evalTenant, route: t.rt.index})
	if err := ctx.Err(); err != nil && w.status == 0 {
		return eval.Result{}, err
	}
	res := eval.Result{Status: w.status, Body: w.body.Bytes()}
	if tx.Verdict == custody.Rejected {
		res.Code = string(tx.Code)
	}
	return res, nil
}

// RecordEval appends the run's leaf: the suite's digest, the route, the
// path tuple the run saw, the pass count and every case's outcome digest,
// no case or answer text. It returns the leaf's request id.
func (g *Gateway) RecordEval(ctx context.Context, rep eval.Report) (string, error) {
	now := g.now()
	tx := &custody.Transaction{ID: custody.NewID(now), Time: now.UTC(), Endpoint: EndpointEval, Tenant: config.EvalPrincipal, Canary: true,
		RequestedModel: rep.Model, Provider: rep.Path.Provider, ResponseModel: rep.Path.Model, Fingerprint: rep.Path.Fingerprint,
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

// mountEvals adds the evals' admin API.
func (g *Gateway) mountEvals(mux *http.ServeMux) {
	mux.Handle("/v1/custody/evals", g.only(http.MethodGet, g.handle(g.evalStatus)))
	mux.Handle("/v1/custody/evals/run", g.only(http.MethodPost, g.handle(g.evalRun)))
}

// evalRun answers POST /v1/custody/evals/run {"suite": NAME?, "route":
// "MODEL/PROVIDER"?} (admin): the selected suites run now, inside serve
// (their pass state, leaves and events are serve's), and the reports are
// the answer. After an upstream was put back on a path already known, no
// path change triggers a run: this is the operator's way to re-qualify
// the route at once. The run goes on if the caller leaves.
func (g *Gateway) evalRun(w http.ResponseWriter, r *http.Request) error {
	if err := g.keys.admin(r); err != nil {
		return err
	}
	var req struct {
		Suite string `json:"suite"`
		Route string `json:"route"`
		Pin   bool   `json:"pin"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			return &custody.Error{Code: custody.CodeInvalidRequest, Message: `send {"suite": "NAME", "route": "MODEL/PROVIDER", "pin": false}, each optional`}
		}
	}
	if g.evals == nil {
		return custody.Errorf(custody.CodeNotFound, "no evaluation suites are configured")
	}
	reps, err := g.evals.RunOnce(context.WithoutCancel(r.Context()), eval.RunOptions{Suite: req.Suite, Route: req.Route, Pin: req.Pin})
	if errors.Is(err, eval.ErrNoMatch) {
		return custody.Errorf(custody.CodeNotFound, "no suite %q covers route %q", req.Suite, req.Route)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"object": "list", "data": reps})
}

// evalStatus answers GET /v1/custody/evals (admin): for every route, the
// suites covering it, the policies that require each, whether the
// route's current path passed it, and its latest run (cases by id, the
// baseline, regressions), for the console's panel.
func (g *Gateway) evalStatus(w http.ResponseWriter, r *http.Request) error {
	if err := g.keys.admin(r); err != nil {
		return err
	}
	type suiteStatus struct {
		Suite      string       `json:"suite"`
		Passed     bool         `json:"passed"`      // the route's current path passed it
		RequiredBy []string     `json:"required_by"` // policies
		Last       *eval.Report `json:"last"`        // null before the first run
	}
	type routeStatus struct {
		Route  string        `json:"route"`
		Model  string        `json:"model"`
		Index  int           `json:"index"`
		Suites []suiteStatus `json:"suites"`
	}
	last := map[string]eval.Report{}
	if g.evals != nil {
		for _, rep := range g.evals.Last() {
			last[rep.Suite+"\x00"+rep.Route] = rep
		}
	}
	out := []routeStatus{}
	for _, rt := range g.EvalRoutes() {
		rs := routeStatus{Route: rt.Target.Name(), Model: rt.Model, Index: rt.Index, Suites: []suiteStatus{}}
		if g.evals != nil {
			for _, s := range g.evals.Covering(rt.Model, rt.Index) {
				ss := suiteStatus{Suite: s, Passed: g.evals.Passed(s, rt.Model, rt.Index), RequiredBy: []string{}}
				for _, p := range g.cfg.Policies {
					if slices.Contains(p.RequireEvals, s) {
						ss.RequiredBy = append(ss.RequiredBy, p.Name)
					}
				}
				if rep, ok := last[s+"\x00"+rs.Route]; ok {
					ss.Last = &rep
				}
				rs.Suites = append(rs.Suites, ss)
			}
		}
		out = append(out, rs)
	}
	return writeJSON(w, map[string]any{"object": "list", "data": out})
}
