// Package adminapi is custody's admin API: the records, timeline, stats,
// log, canary and evaluation endpoints an operator (or the console)
// reads, the receipts a tenant fetches, and the response types a client
// decodes. Every endpoint is registered once, in routes.go: that table
// routes, authenticates, lists what the console may call in process, and
// is what openapi.json is tested against.
//
// The API is mounted beside the gateway (gateway.Options.Mounts), which
// authenticates callers and writes errors in its OpenAI shape (Gate).
package adminapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/canary"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/eval"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/recorder"
)

// Gate is what the API needs of the gateway it is mounted beside: the
// same keys and the same error answers as the proxy's.
type Gate interface {
	// Admin authenticates r as an admin (401/403/429 as errors).
	Admin(r *http.Request) error
	// Tenant authenticates r as a tenant.
	Tenant(r *http.Request) (*config.Tenant, error)
	// Refuse writes err as the gateway's error answer and counts it.
	Refuse(w http.ResponseWriter, err error)
}

// Config is what the API reads.
type Config struct {
	// Config gives the routes (model/provider) and the policies that
	// require evaluation suites.
	Config   *config.Config
	Recorder *recorder.Recorder
	Index    index.Index
	Log      *ledger.Log
	// HTTP fetches receipts from other replicas; nil means the default.
	HTTP *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// API serves the admin endpoints. Bind it to its gateway, and give it the
// runners (SetRunners), before the gateway serves.
type API struct {
	cfg      Config
	gate     Gate           // set by Bind, before serving
	canaries *canary.Runner // set by SetRunners; nil: canaries are not running
	evals    *eval.Runner   // set by SetRunners; nil: no suites
	logState checkpointSeen
}

// New returns the API of cfg.
func New(cfg Config) *API {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &API{cfg: cfg}
}

// Bind sets the gateway whose keys and error answers the API uses. The
// gateway is built with the API's Mounts, so it is bound after.
func (a *API) Bind(g Gate) { a.gate = g }

// SetRunners gives the API the canary and eval runners whose state it
// shows (either may be nil).
func (a *API) SetRunners(c *canary.Runner, e *eval.Runner) { a.canaries, a.evals = c, e }

// Mounts are the API's patterns and handlers, for gateway.Options.Mounts.
func (a *API) Mounts() map[string]http.Handler {
	out := map[string]http.Handler{}
	for _, e := range endpoints {
		h := a.handler(e, false)
		if prev, ok := out[e.Path]; ok {
			// Two methods on one path (none today): dispatch by method.
			h = byMethod(prev, e.Method, h)
		}
		out[e.Path] = h
	}
	return out
}

// InProcess serves the endpoints the console reads without asking for an
// admin key, for a caller in this process that has authenticated the
// operator its own way (the console's login). It is never mounted on a
// listener.
func (a *API) InProcess() http.Handler {
	mux := http.NewServeMux()
	for _, e := range endpoints {
		if e.InProcess {
			mux.Handle(e.Method+" "+e.Path, a.handler(e, true))
		}
	}
	return mux
}

// handler serves e: the method, then the key its Auth asks for (unless
// inProcess), then the endpoint; an error is answered by the gate.
func (a *API) handler(e Endpoint, inProcess bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := a.serve(e, inProcess, w, r)
		if err != nil {
			a.refuse(w, err)
		}
	})
}

func (a *API) serve(e Endpoint, inProcess bool, w http.ResponseWriter, r *http.Request) error {
	if r.Method != e.Method && (r.Method != http.MethodHead || e.Method != http.MethodGet) {
		w.Header().Set("Allow", e.Method)
		return &custody.Error{Code: custody.CodeMethodNotAllowed, Message: r.Method + " is not allowed here; use " + e.Method}
	}
	var t *config.Tenant
	switch {
	case inProcess || e.Auth == AuthNone:
	case a.gate == nil:
		return custody.Errorf(custody.CodeInternal, "the admin API is not bound to a gateway")
	case e.Auth == AuthAdmin:
		if err := a.gate.Admin(r); err != nil {
			return err
		}
	case e.Auth == AuthTenant:
		var err error
		if t, err = a.gate.Tenant(r); err != nil {
			return err
		}
	}
	return e.serve(a, &call{w: w, r: r, tenant: t})
}

func (a *API) refuse(w http.ResponseWriter, err error) {
	if a.gate != nil {
		a.gate.Refuse(w, err)
		return
	}
	// Unbound (a test's API without a gateway): the same shape, uncounted.
	var e *custody.Error
	if !errors.As(err, &e) {
		e = &custody.Error{Code: custody.CodeInternal, Message: "internal error"}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status())
	w.Write(openai.ErrorBody(e.Message, e.Code.Type(), string(e.Code), e.Param))
}

// call is one request to an endpoint: its writer, its request, and the
// tenant it authenticated as (endpoints with AuthTenant).
type call struct {
	w      http.ResponseWriter
	r      *http.Request
	tenant *config.Tenant
}

func (c *call) json(v any) error {
	c.w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(c.w).Encode(v)
}

func byMethod(a http.Handler, method string, b http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == method {
			b.ServeHTTP(w, r)
			return
		}
		a.ServeHTTP(w, r)
	})
}

// checkpointSeen remembers when this replica first saw the log's current
// checkpoint: a checkpoint carries no time, and the age of the last one is
// what tells an operator that the log has stopped integrating.
type checkpointSeen struct {
	mu   sync.Mutex
	text []byte    // guarded by mu
	at   time.Time // guarded by mu
}
