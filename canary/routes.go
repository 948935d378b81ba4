package canary

import (
	"context"

	"github.com/custody-gateway/custody/internal/routeclient"
	"github.com/custody-gateway/custody/tokenize"
)

// Routes are the gateway's routes (gateway.Gateway.Routes) as canary
// targets: each probe runs through custody's own pipeline on exactly that
// route, recorded in the ledger as canary traffic.
func Routes(clients []routeclient.Client) []Route {
	out := make([]Route, 0, len(clients))
	for _, c := range clients {
		out = append(out, Route{Model: c.Model(), Index: c.Index(), Target: target{c}})
	}
	return out
}

// target is a route client as a CountingTarget.
type target struct{ c routeclient.Client }

func (t target) Name() string              { return t.c.Name() }
func (t target) Capacity() int             { return t.c.Capacity() }
func (t target) Counter() tokenize.Counter { return t.c.Counter() }

// Chat sends the probe through custody's checks on this route only, as
// the probe's synthetic tenant.
func (t target) Chat(ctx context.Context, req ChatRequest) (Result, error) {
	body, err := req.Body(t.c.Model())
	if err != nil {
		return Result{}, err
	}
	a, err := t.c.Canary(ctx, body, req.Tenant)
	if err != nil {
		return Result{}, err
	}
	return Result{Status: a.Status, Body: a.Body, TTFB: a.TTFB, Code: a.Code}, nil
}

// Direct sends the probe straight to the route's upstream, with the
// route's upstream model, bypassing custody.
func (t target) Direct(ctx context.Context, req ChatRequest) (Result, error) {
	body, err := req.Body(t.c.UpstreamModel())
	if err != nil {
		return Result{}, err
	}
	a, err := t.c.Direct(ctx, body)
	if err != nil {
		return Result{}, err
	}
	return Result{Status: a.Status, Body: a.Body}, nil
}
