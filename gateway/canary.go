package gateway

import (
	"context"
	"io"
	"strings"

	"github.com/custody-gateway/custody/canary"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
)

// canaryProbe marks an exchange as canary traffic: its synthetic tenant
// and the one route it probes.
type canaryProbe struct {
	tenant *config.Tenant
	route  int
}

// canaryPolicy governs canary traffic: one route, no fallback, strict
// contamination. (Pinning is the route's accept list; identity is the
// canary's own test.)
var canaryPolicy = config.Policy{Name: "canary", Fallback: "deny", OnContamination: "reject", OnCacheShared: "flag"}

// CanaryRoutes are the gateway's routes as canary targets: each probe runs
// through custody's own pipeline on exactly that route (routeClient),
// recorded in the ledger as canary traffic.
func (g *Gateway) CanaryRoutes() []canary.Route {
	var out []canary.Route
	for _, c := range g.routeClients() {
		out = append(out, canary.Route{Model: c.m.cfg.Name, Index: c.rt.index, Target: &canaryTarget{c}})
	}
	return out
}

// SetCanaries hooks the canary runner in: its quarantine decides route
// health, and a path change triggers the route's probes. Call it before
// serving.
func (g *Gateway) SetCanaries(r *canary.Runner) {
	g.health, g.canaries = r, r
	if g.cfg.Canaries.Enabled() && !g.cfg.Canaries.IgnorePathChanges {
		g.onPath = r.Trigger
	}
}

type canaryTarget struct{ routeClient }

func (t *canaryTarget) Capacity() int             { return t.m.capacity }
func (t *canaryTarget) Counter() tokenize.Counter { return t.m.counter }

// tenant is the synthetic tenant a probe runs as, always in custody's
// internal namespace whatever the canary package calls it (its default
// "custody-canary" becomes custody:canary): config refuses tenant ids
// there, so no configured tenant shares a canary's receipts, records or
// contamination secrets.
func (t *canaryTarget) tenant(id string) *config.Tenant {
	return &config.Tenant{ID: canaryTenantID(id), Policy: canaryPolicy.Name}
}

func canaryTenantID(id string) string {
	switch {
	case id == "" || id == "custody-canary":
		return config.CanaryPrincipal
	case strings.HasPrefix(id, config.InternalPrefix):
		return id
	}
	return config.CanaryPrincipal + ":" + id
}

// Chat sends the probe through custody's checks on this route only.
func (t *canaryTarget) Chat(ctx context.Context, req canary.ChatRequest) (canary.Result, error) {
	body, err := req.Body(t.m.cfg.Name)
	if err != nil {
		return canary.Result{}, err
	}
	a, err := t.chat(ctx, body, t.tenant(req.Tenant), "canary")
	if err != nil {
		return canary.Result{}, err
	}
	return canary.Result{Status: a.status, Body: a.body, TTFB: a.ttfb, Code: a.code}, nil
}

// Direct sends the probe straight to the route's upstream, bypassing
// custody (the oversize probe: what does the upstream do on its own?).
func (t *canaryTarget) Direct(ctx context.Context, req canary.ChatRequest) (canary.Result, error) {
	body, err := req.Body(t.rt.cfg.Model)
	if err != nil {
		return canary.Result{}, err
	}
	resp, err := t.rt.client.Do(ctx, upstream.Call{Path: openaiChat.path, Body: body, RequestID: "canary-direct"})
	if err != nil {
		return canary.Result{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, t.g.cfg.Limits.MaxResponseBytes))
	if err != nil {
		return canary.Result{}, err
	}
	return canary.Result{Status: resp.StatusCode, Body: b}, nil
}
