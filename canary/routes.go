package canary

import (
	"context"

	"github.com/custody-gateway/custody/internal/routeclient"
)

// Routes are the gateway's routes (gateway.Gateway.Routes) as canary
// targets: each probe runs through custody's own pipeline on exactly that
// route, recorded in the ledger as canary traffic.
func Routes(clients []routeclient.Client) []Route {
	return routeclient.Routes(clients, func(c routeclient.Client) Target { return target{c} })
}

// target is a route client as a CountingTarget (its Name, Capacity and
// Counter are the client's).
type target struct{ routeclient.Client }

// Chat sends the probe through custody's checks on this route only, as
// the probe's synthetic tenant.
func (t target) Chat(ctx context.Context, req ChatRequest) (Result, error) {
	a, err := routeclient.Send(ctx, t.Model(), req.Body, func(ctx context.Context, b []byte) (routeclient.Answer, error) {
		return t.Canary(ctx, b, req.Tenant)
	})
	return Result{Status: a.Status, Body: a.Body, TTFB: a.TTFB, Code: a.Code}, err
}

// Direct sends the probe straight to the route's upstream, with the
// route's upstream model, bypassing custody.
func (t target) Direct(ctx context.Context, req ChatRequest) (Result, error) {
	a, err := routeclient.Send(ctx, t.UpstreamModel(), req.Body, t.Client.Direct)
	return Result{Status: a.Status, Body: a.Body}, err
}
