package gateway

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/internal/routeclient"
	"github.com/custody-gateway/custody/tokenize"
)

// routeClient is the one way in-process traffic (canary probes, eval
// cases) reaches a route: a chat completion served by custody's own
// pipeline on exactly one route of one model, as a synthetic tenant, with
// no fallback, recorded in the ledger like any transaction. It is the
// gateway's routeclient.Client; canary.Routes and eval.Routes build their
// targets on it.
type routeClient struct {
	g  *Gateway
	m  *model
	rt route
}

// Routes are a client for every route, in config order: what canaries
// and evals run through.
func (g *Gateway) Routes() []routeclient.Client {
	var out []routeclient.Client
	for i := range g.cfg.Models {
		m := g.models[g.cfg.Models[i].Name]
		for _, rt := range m.routes {
			out = append(out, routeClient{g: g, m: m, rt: rt})
		}
	}
	return out
}

// Name is the route's label, "model/provider".
func (c routeClient) Name() string              { return c.m.cfg.Name + "/" + c.rt.cfg.Provider }
func (c routeClient) Model() string             { return c.m.cfg.Name }
func (c routeClient) Index() int                { return c.rt.index }
func (c routeClient) UpstreamModel() string     { return c.rt.cfg.Model }
func (c routeClient) Capacity() int             { return c.m.capacity }
func (c routeClient) Counter() tokenize.Counter { return c.m.counter }

// chat serves body (a chat completion request) as tenant on c's route,
// recorded as synthetic traffic from sender, which also names the caller
// in the request's RemoteAddr (the logs). A
// context that ended before any answer is an error; a custody rejection
// is an answer with its code.
func (c routeClient) chat(ctx context.Context, body []byte, tenant *config.Tenant, sender custody.Sender) (routeclient.Answer, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return routeclient.Answer{}, err
	}
	r.RemoteAddr = string(sender)
	w := &memoryWriter{header: http.Header{}}
	start := time.Now()
	tx := c.g.serve(openaiChat, w, r, &canaryProbe{tenant: tenant, route: c.rt.index, sender: sender})
	if err := ctx.Err(); err != nil && w.status == 0 {
		return routeclient.Answer{}, err
	}
	a := routeclient.Answer{Status: w.status, Body: w.body.Bytes()}
	if !w.first.IsZero() {
		a.TTFB = w.first.Sub(start)
	}
	if tx.Verdict == custody.Rejected {
		a.Code = string(tx.Code)
	}
	for _, o := range tx.Outcomes {
		if o.Check == custody.CheckContract && o.Status != custody.StatusSkipped {
			a.Contract = o.HeaderValue()
			break
		}
	}
	return a, nil
}

// memoryWriter is the ResponseWriter of an in-process exchange.
type memoryWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
	first  time.Time // when the response began: the status or first byte
}

func (w *memoryWriter) Header() http.Header { return w.header }
func (w *memoryWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status, w.first = code, time.Now()
	}
}
func (w *memoryWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status, w.first = http.StatusOK, time.Now()
	}
	return w.body.Write(b)
}
func (w *memoryWriter) Flush() {}
