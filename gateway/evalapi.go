package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/eval"
)

// mountEvals adds the evals' admin API.
func (g *Gateway) mountEvals(mux *http.ServeMux) {
	mux.Handle(PathEvals, g.only(http.MethodGet, g.handle(g.evalStatus)))
	mux.Handle(PathEvalsRun, g.only(http.MethodPost, g.handle(g.evalRun)))
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
	out := make([]*evalReportJSON, len(reps))
	for i := range reps {
		out[i] = evalReportOf(&reps[i])
	}
	return writeJSON(w, map[string]any{"object": "list", "data": out})
}

// evalStatus answers GET /v1/custody/evals (admin): for every route, the
// suites covering it, the policies that require each, whether the
// route's current path passed it, and its latest run (cases by id, the
// baseline, regressions), for the console's panel.
func (g *Gateway) evalStatus(w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	type suiteStatus struct {
		Suite      string          `json:"suite"`
		Passed     bool            `json:"passed"`      // the route's current path passed it
		RequiredBy []string        `json:"required_by"` // policies
		Last       *evalReportJSON `json:"last"`        // null before the first run
	}
	type routeStatus struct {
		Route    string        `json:"route"`
		Model    string        `json:"model"`
		Provider string        `json:"provider"`
		Index    int           `json:"index"`
		Suites   []suiteStatus `json:"suites"`
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
		rs.Provider = strings.TrimPrefix(rs.Route, rt.Model+"/")
		if g.evals != nil {
			for _, s := range g.evals.Covering(rt.Model, rt.Index) {
				ss := suiteStatus{Suite: s, Passed: g.evals.Passed(s, rt.Model, rt.Index), RequiredBy: []string{}}
				for _, p := range g.cfg.Policies {
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
		out = append(out, rs)
	}
	return writeJSON(w, map[string]any{"object": "list", "data": out})
}

// evalReportJSON is a run as the admin API shows it (GET
// /v1/custody/evals, POST /v1/custody/evals/run): eval.Report in the
// API's style, durations in milliseconds, lists never null.
type evalReportJSON struct {
	Suite            string            `json:"suite"`
	SuiteDigest      string            `json:"suite_digest"`
	Route            string            `json:"route"`
	Model            string            `json:"model"`
	Index            int               `json:"index"`
	Path             eval.Path         `json:"path"`
	Trigger          eval.Trigger      `json:"trigger"`
	Time             time.Time         `json:"time"`
	DurationMS       float64           `json:"duration_ms"`
	Cases            []evalCaseJSON    `json:"cases"`
	Passed           int               `json:"passed"`
	Total            int               `json:"total"`
	Ratio            float64           `json:"ratio"`
	Threshold        float64           `json:"threshold"`
	OK               bool              `json:"ok"`
	PathMoved        bool              `json:"path_moved"`
	PromptTokens     int               `json:"prompt_tokens"`
	CompletionTokens int               `json:"completion_tokens"`
	Baseline         *eval.BaselineRef `json:"baseline"`
	Regressions      []string          `json:"regressions"`
	Changed          []string          `json:"changed"`
	Failing          []string          `json:"failing"`
	LedgerID         string            `json:"ledger_id"` // "" when the leaf could not be recorded
}

type evalCaseJSON struct {
	ID        string  `json:"id"`
	Pass      bool    `json:"pass"`
	Reason    string  `json:"reason"` // the failed assertion, never answer text; "" when it passed
	Status    int     `json:"status"`
	Code      string  `json:"code"` // custody's code if it rejected the answer, else ""
	LatencyMS float64 `json:"latency_ms"`
	Digest    string  `json:"digest"`
}

func evalReportOf(r *eval.Report) *evalReportJSON {
	out := &evalReportJSON{Suite: r.Suite, SuiteDigest: r.SuiteDigest, Route: r.Route, Model: r.Model, Index: r.Index, Path: r.Path,
		Trigger: r.Trigger, Time: r.Time.UTC(), DurationMS: ms(r.Duration), Cases: make([]evalCaseJSON, len(r.Cases)),
		Passed: r.Passed, Total: r.Total, Ratio: r.Ratio, Threshold: r.Threshold, OK: r.OK, PathMoved: r.PathMoved,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Baseline: r.Baseline,
		Regressions: nonNil(r.Regressions), Changed: nonNil(r.Changed), Failing: nonNil(r.Failing()), LedgerID: r.LedgerID}
	if b := out.Baseline; b != nil {
		b2 := *b
		b2.Time = b.Time.UTC()
		out.Baseline = &b2
	}
	for i, c := range r.Cases {
		out.Cases[i] = evalCaseJSON{ID: c.ID, Pass: c.Pass, Reason: c.Reason, Status: c.Status, Code: c.Code, LatencyMS: ms(c.Latency), Digest: c.Digest}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
