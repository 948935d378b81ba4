package gateway

import (
	"context"

	"github.com/custody-gateway/custody"
	"io"
	"strings"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/internal/routeclient"
	"github.com/custody-gateway/custody/upstream"
)

// canaryProbe marks an exchange as in-process traffic (canary probes,
// eval cases): its synthetic tenant, the one route it runs on, and who
// sends it (custody.SenderCanary or custody.SenderEval), as the
// transaction records it.
type canaryProbe struct {
	tenant *config.Tenant
	route  int
	sender custody.Sender
}

// senderOf is the Sender of the transaction p marks: none for a client's.
func (p *canaryProbe) senderOf() custody.Sender {
	if p == nil {
		return ""
	}
	return p.sender
}

// canaryPolicy governs canary traffic: one route, no fallback, strict
// contamination. (Pinning is the route's accept list; identity is the
// canary's own test.)
var canaryPolicy = config.Policy{Name: "canary", Fallback: "deny", OnContamination: "reject", OnCacheShared: "flag"}

// Canaries is what the gateway asks of the canary runner (canary.Runner):
// which routes its probes quarantined (a CacheHealth too, when it knows
// which routes' prompt caches are shared), and to probe a route whose
// path changed.
type Canaries interface {
	Health
	Trigger(model string, route int)
}

// SetCanaries hooks the canary runner in: its quarantine decides route
// health, and a path change triggers the route's probes. Call it before
// serving.
func (g *Gateway) SetCanaries(r Canaries) {
	g.health = r
	if g.cfg.Canaries.Enabled() && !g.cfg.Canaries.IgnorePathChanges {
		g.onPath = r.Trigger
	}
}

// canaryTenant is the synthetic tenant a probe runs as, always in
// custody's internal namespace whatever the canary package calls it (its
// default "custody-canary" becomes custody:canary): config refuses tenant
// ids there, so no configured tenant shares a canary's receipts, records
// or contamination secrets.
func canaryTenant(id string) *config.Tenant {
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

// Canary sends a probe through custody's checks on this route only.
func (c routeClient) Canary(ctx context.Context, body []byte, tenant string) (routeclient.Answer, error) {
	return c.chat(ctx, body, canaryTenant(tenant), custody.SenderCanary)
}

// Direct sends a probe straight to the route's upstream, bypassing
// custody (the oversize probe: what does the upstream do on its own?).
func (c routeClient) Direct(ctx context.Context, body []byte) (routeclient.Answer, error) {
	resp, err := c.rt.client.Do(ctx, upstream.Call{Path: openaiChat.path, Body: body, RequestID: "canary-direct"})
	if err != nil {
		return routeclient.Answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.g.cfg.Limits.MaxResponseBytes))
	if err != nil {
		return routeclient.Answer{}, err
	}
	return routeclient.Answer{Status: resp.StatusCode, Body: b}, nil
}
