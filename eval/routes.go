package eval

import (
	"context"

	"github.com/custody-gateway/custody/internal/routeclient"
)

// Routes are the gateway's routes (gateway.Gateway.Routes) as eval
// targets: each case runs through custody's own pipeline on exactly that
// route, as custody:eval, under the canaries' policy (one route, no
// fallback).
func Routes(clients []routeclient.Client) []Route {
	return routeclient.Routes(clients, func(c routeclient.Client) Target { return target{c} })
}

// target is a route client as a Target (its Name is the client's).
type target struct{ routeclient.Client }

// Chat sends the case through custody's checks on this route only.
func (t target) Chat(ctx context.Context, req Request) (Result, error) {
	a, err := routeclient.Send(ctx, t.Model(), req.Body, t.Eval)
	return Result{Status: a.Status, Body: a.Body, Code: a.Code, Contract: a.Contract}, err
}
