package eval

import (
	"context"

	"github.com/custody-gateway/custody/internal/routeclient"
)

// Routes are the gateway's routes (gateway.Gateway.Routes) as eval
// targets: each case runs through custody's own pipeline on exactly that
// route, as custody:eval, under the canaries' policy (one route, no
// fallback), recorded as eval traffic.
func Routes(clients []routeclient.Client) []Route {
	out := make([]Route, 0, len(clients))
	for _, c := range clients {
		out = append(out, Route{Model: c.Model(), Index: c.Index(), Target: target{c}})
	}
	return out
}

type target struct{ c routeclient.Client }

func (t target) Name() string { return t.c.Name() }

// Chat sends the case through custody's checks on this route only.
func (t target) Chat(ctx context.Context, req Request) (Result, error) {
	body, err := req.Body(t.c.Model())
	if err != nil {
		return Result{}, err
	}
	a, err := t.c.Eval(ctx, body)
	if err != nil {
		return Result{}, err
	}
	return Result{Status: a.Status, Body: a.Body, Code: a.Code}, nil
}
