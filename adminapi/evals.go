package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/eval"
)

// evalRun answers POST /v1/custody/evals/run {"suite": NAME?, "route":
// "MODEL/PROVIDER"?} (admin): the selected suites run now, inside serve
// (their pass state, leaves and events are serve's), and the reports are
// the answer. After an upstream was put back on a path already known, no
// path change triggers a run: this is the operator's way to re-qualify
// the route at once. The run goes on if the caller leaves.
func (a *API) evalRun(c *call) error {
	var req struct {
		Suite string `json:"suite"`
		Route string `json:"route"`
		Pin   bool   `json:"pin"`
	}
	body, _ := io.ReadAll(io.LimitReader(c.r.Body, 4096))
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			return &custody.Error{Code: custody.CodeInvalidRequest, Message: `send {"suite": "NAME", "route": "MODEL/PROVIDER", "pin": false}, each optional`}
		}
	}
	if a.evals == nil {
		return custody.Errorf(custody.CodeNotFound, "no evaluation suites are configured")
	}
	reps, err := a.evals.RunOnce(context.WithoutCancel(c.r.Context()), eval.RunOptions{Suite: req.Suite, Route: req.Route, Pin: req.Pin})
	if errors.Is(err, eval.ErrNoMatch) {
		return custody.Errorf(custody.CodeNotFound, "no suite %q covers route %q", req.Suite, req.Route)
	}
	if err != nil {
		return err
	}
	out := EvalReportList{Object: "list", Data: make([]*EvalReport, len(reps))}
	for i := range reps {
		out.Data[i] = evalReportOf(&reps[i])
	}
	return c.json(out)
}

// evalStatus answers GET /v1/custody/evals (admin): for every route, the
// suites covering it, the policies that require each, whether the
// route's current path passed it, and its latest run (cases by id, the
// baseline, regressions), for the console's panel.
func (a *API) evalStatus(c *call) error {
	last := map[string]eval.Report{}
	if a.evals != nil {
		for _, rep := range a.evals.Last() {
			last[rep.Suite+"\x00"+rep.Route] = rep
		}
	}
	out := EvalStatusList{Object: "list", Data: []EvalRoute{}}
	for _, rt := range a.routes() {
		rs := EvalRoute{Route: rt.name, Model: rt.model, Provider: rt.provider, Index: rt.index, Suites: []SuiteStatus{}}
		if a.evals != nil {
			for _, s := range a.evals.Covering(rt.model, rt.index) {
				ss := SuiteStatus{Suite: s, Passed: a.evals.Passed(s, rt.model, rt.index), RequiredBy: []string{}}
				for _, p := range a.cfg.Config.Policies {
					if slices.Contains(p.RequireEvals, s) {
						ss.RequiredBy = append(ss.RequiredBy, p.Name)
					}
				}
				if rep, ok := last[s+"\x00"+rs.Route]; ok {
					ss.Last = evalReportOf(&rep)
				}
				rs.Suites = append(rs.Suites, ss)
			}
		}
		out.Data = append(out.Data, rs)
	}
	return c.json(out)
}

func evalReportOf(r *eval.Report) *EvalReport {
	out := &EvalReport{Suite: r.Suite, SuiteDigest: r.SuiteDigest, Route: r.Route, Model: r.Model, Index: r.Index, Path: r.Path,
		Trigger: r.Trigger, Time: r.Time.UTC(), DurationMS: ms(r.Duration), Cases: make([]EvalCase, len(r.Cases)),
		Passed: r.Passed, Total: r.Total, Ratio: r.Ratio, Threshold: r.Threshold, OK: r.OK, PathMoved: r.PathMoved,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Baseline: r.Baseline,
		Regressions: nonNil(r.Regressions), Changed: nonNil(r.Changed), Failing: nonNil(r.Failing()), LedgerID: r.LedgerID,
		Contract: EvalContract{Required: r.Contract.Required, Checked: r.Contract.Checked, Passed: r.Contract.Passed,
			PassRate: r.Contract.Rate(), Broken: map[string]int{}, Reason: r.ContractReason()}}
	for k, v := range r.Contract.Broken {
		out.Contract.Broken[k] = v
	}
	if b := out.Baseline; b != nil {
		b2 := *b
		b2.Time = b.Time.UTC()
		out.Baseline = &b2
	}
	for i, c := range r.Cases {
		out.Cases[i] = EvalCase{ID: c.ID, Pass: c.Pass, Reason: c.Reason, Status: c.Status, Code: c.Code, Contract: c.Contract, LatencyMS: ms(c.Latency), Digest: c.Digest}
	}
	return out
}
