// Package routeclient is the seam between the gateway and the traffic it
// serves to itself. Canary probes and eval cases reach one route of one
// model through the gateway's own pipeline: the gateway hands out a
// Client per route (gateway.Gateway.Routes), and canary and eval build
// their targets on it (canary.Routes, eval.Routes), so that the gateway
// imports neither and neither imports the gateway.
package routeclient

import (
	"context"
	"time"

	"github.com/custody-gateway/custody/tokenize"
)

// Client is one route of one model as in-process traffic sees it.
// Implementations are safe for concurrent use.
type Client interface {
	// Name is the route's label, "model/provider".
	Name() string
	// Model is the client-facing model the route serves; Index the
	// route's place in the model's routes (config order).
	Model() string
	Index() int
	// UpstreamModel is the model name the route's upstream is asked for.
	UpstreamModel() string
	// Capacity is the route's verified capacity in prompt tokens, and
	// Counter the model's tokenizer (the `tokenizer:` of its config).
	Capacity() int
	Counter() tokenize.Counter
	// Canary serves body, a chat completion request for Model(), through
	// custody's checks on this route only (no fallback) as the synthetic
	// canary tenant named tenant ("" the default one), recorded as canary
	// traffic.
	Canary(ctx context.Context, body []byte, tenant string) (Answer, error)
	// Eval serves body the same way as custody:eval, recorded as eval
	// traffic.
	Eval(ctx context.Context, body []byte) (Answer, error)
	// Direct sends body, a chat completion request for UpstreamModel(),
	// straight to the route's upstream, bypassing custody.
	Direct(ctx context.Context, body []byte) (Answer, error)
}

// Answer is what an in-process exchange returned. A context that ended
// before any answer, or a transport failure of Direct, is an error, not
// an Answer; a custody rejection is an Answer with its Code.
type Answer struct {
	Status int
	Body   []byte
	// TTFB is the time until the status or first byte; 0 when not
	// measured (Direct).
	TTFB time.Duration
	// Code is custody's code when it rejected the answer, else "".
	Code string
	// Contract is what the contract check found, served or rejected:
	// "ok", the broken clause's code, or "" when it did not judge the
	// answer (evals hold a run to a contract pass rate with it).
	Contract string
}

// Route is one route a runner runs on: the client-facing model, the
// route's index in the model's routes (as the gateway's Health, Canaries
// and Evals name it) and the runner's target for it (canary.Route is a
// Route[canary.Target], eval.Route a Route[eval.Target]).
type Route[T any] struct {
	Model  string
	Index  int
	Target T
}

// Routes are the routes of every client, in order, each with the target
// a runner makes of it: how canary.Routes and eval.Routes make their
// runners' routes of the gateway's clients.
func Routes[T any](clients []Client, target func(Client) T) []Route[T] {
	out := make([]Route[T], 0, len(clients))
	for _, c := range clients {
		out = append(out, Route[T]{Model: c.Model(), Index: c.Index(), Target: target(c)})
	}
	return out
}

// Send sends the request body(Model()) by send, one of c's methods
// (c.Canary, c.Eval, c.Direct, closed over their other arguments).
func Send(ctx context.Context, model string, body func(model string) ([]byte, error), send func(context.Context, []byte) (Answer, error)) (Answer, error) {
	b, err := body(model)
	if err != nil {
		return Answer{}, err
	}
	return send(ctx, b)
}
