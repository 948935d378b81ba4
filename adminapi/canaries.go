package adminapi

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/canary"
	"github.com/custody-gateway/custody/config"
)

// route is one configured route as the API names it.
type route struct {
	name, model, provider string
	index                 int
}

// routes are the configured routes, in config order: the ones canaries
// probe and evals cover.
func (a *API) routes() []route {
	var out []route
	for _, m := range a.cfg.Config.Models {
		for j, rc := range m.Routes {
			out = append(out, route{name: m.Name + "/" + rc.Provider, model: m.Name, provider: rc.Provider, index: j})
		}
	}
	return out
}

// canaryStatus answers GET /v1/custody/canaries: every route's last run
// and, for a quarantined route, since when and why, as the canary runner
// holds them.
func (a *API) canaryStatus(c *call) error {
	last := map[string]canary.Report{}
	if a.canaries != nil {
		for _, rep := range a.canaries.Last() {
			last[rep.Name] = rep
		}
	}
	out := CanaryList{Object: "list", Data: []RouteStatus{}}
	for _, rt := range a.routes() {
		st := RouteStatus{Route: rt.name, Model: rt.model, Provider: rt.provider, Index: rt.index}
		if rep, ok := last[rt.name]; ok {
			run := &CanaryRun{Time: rep.Time.UTC(), Health: string(rep.Health), OK: rep.OK(), Results: []ProbeResult{}}
			for _, p := range rep.Results {
				run.Results = append(run.Results, ProbeResult{Probe: p.Probe, Status: string(p.Outcome()), Evidence: p.Evidence,
					Code: p.Code, DurationMS: ms(p.Duration)})
			}
			st.Last = run
		}
		if a.canaries != nil {
			if q, ok := a.canaries.Quarantine(rt.model, rt.index); ok {
				st.Quarantined = true
				st.OutOfService = &OutOfService{Since: timeOrNil(q.Since), Reason: q.Reason}
				if q.Reason == "" {
					// Adopted from a runner that never ran it (no run, no reason).
					st.OutOfService.Reason = "canaries found the route broken"
				}
			}
		}
		out.Data = append(out.Data, st)
	}
	return c.json(out)
}

// reenroll answers POST /v1/custody/canaries/reenroll {"route":"model/provider"}:
// the route's identity reference is taken anew (after an announced model
// change, say), and the act is recorded in the ledger and on the timeline.
func (a *API) reenroll(c *call) error {
	var req struct {
		Route string `json:"route"`
	}
	body, _ := io.ReadAll(io.LimitReader(c.r.Body, 4096))
	if err := json.Unmarshal(body, &req); err != nil || req.Route == "" {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "route", Message: `send {"route":"model/provider"}`}
	}
	if a.canaries == nil {
		return custody.Errorf(custody.CodeNotFound, "canaries are not running")
	}
	for _, rt := range a.routes() {
		if rt.name != req.Route {
			continue
		}
		ev, err := a.canaries.Reenroll(c.r.Context(), rt.model, rt.index)
		if err != nil {
			return custody.Wrap(custody.CodeUpstreamUnavailable, err, "re-enrollment failed: "+err.Error())
		}
		now := a.cfg.Now()
		tx := &custody.Transaction{ID: custody.NewID(now), Time: now.UTC(), Endpoint: custody.EndpointReenroll, Tenant: config.AdminPrincipal,
			Canary: true, RequestedModel: rt.model, Provider: rt.provider, Route: rt.index, Decision: string(ev.Kind),
			Status: http.StatusOK, PromptTokensLocal: -1, PromptTokensReported: -1, CompletionTokens: -1}
		tx.Conclude()
		if err := a.cfg.Recorder.Record(c.r.Context(), tx); err != nil {
			return custody.Wrap(custody.CodeLedgerUnavailable, err, "re-enrolled, but the act could not be recorded")
		}
		return c.json(Reenrolled{Route: req.Route, RequestID: tx.ID, Event: CanaryEvent{Time: ev.Time.UTC(), Kind: string(ev.Kind),
			Model: ev.Model, Route: ev.Name, RouteIndex: ev.Route, Probe: ev.Probe, Detail: ev.Detail}})
	}
	return custody.Errorf(custody.CodeNotFound, "no route %q", req.Route)
}
