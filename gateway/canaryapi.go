package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

// EndpointReenroll is the leaf endpoint of an identity re-enrollment
// (custody.EndpointReenroll): an admin action, recorded in the ledger
// like a transaction.
const EndpointReenroll = custody.EndpointReenroll

// canaryStatus answers GET /v1/custody/canaries: every route's last run.
func (g *Gateway) canaryStatus(w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"object": "list", "data": g.routeStatuses(r.Context(), nil)})
}

// reenroll answers POST /v1/custody/canaries/reenroll {"route":"model/provider"}:
// the route's identity reference is taken anew (after an announced model
// change, say), and the act is recorded in the ledger and on the timeline.
func (g *Gateway) reenroll(w http.ResponseWriter, r *http.Request) error {
	if err := g.keys.admin(r); err != nil {
		return err
	}
	var req struct {
		Route string `json:"route"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	if err := json.Unmarshal(body, &req); err != nil || req.Route == "" {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "route", Message: `send {"route":"model/provider"}`}
	}
	if g.canaries == nil {
		return custody.Errorf(custody.CodeNotFound, "canaries are not running")
	}
	for _, rt := range g.CanaryRoutes() {
		if rt.Target.Name() != req.Route {
			continue
		}
		ev, err := g.canaries.Reenroll(r.Context(), rt.Model, rt.Index)
		if err != nil {
			return custody.Wrap(custody.CodeUpstreamUnavailable, err, "re-enrollment failed: "+err.Error())
		}
		now := g.now()
		provider, _, _ := strings.Cut(strings.TrimPrefix(req.Route, rt.Model+"/"), "/")
		tx := &custody.Transaction{ID: custody.NewID(now), Time: now.UTC(), Endpoint: EndpointReenroll, Tenant: config.AdminPrincipal,
			Canary: true, RequestedModel: rt.Model, Provider: provider, Route: rt.Index, Decision: string(ev.Kind),
			Status: http.StatusOK, PromptTokensLocal: -1, PromptTokensReported: -1, CompletionTokens: -1}
		tx.Conclude()
		if err := g.rec.Record(r.Context(), tx); err != nil {
			return custody.Wrap(custody.CodeLedgerUnavailable, err, "re-enrolled, but the act could not be recorded")
		}
		return writeJSON(w, map[string]any{"route": req.Route, "event": canaryEventJSON(ev), "request_id": tx.ID})
	}
	return custody.Errorf(custody.CodeNotFound, "no route %q", req.Route)
}
