// Package gateway is custody's http.Handler: authentication, the
// integrity pipeline around each upstream call, the Custody-* headers and
// the one place where errors become OpenAI-shaped responses.
//
// A request goes through: authenticate, read (bounded), parse, choose the
// model and policy, count the prompt (before forwarding only when its
// byte length could exceed capacity), forward along the routes, check
// the response, record the transaction durably, and only then answer.
package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/accounting"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/policy"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
)

// Gateway is the http.Handler of `custody serve`.
type Gateway struct {
	cfg      *config.Config
	keys     *keyring
	models   map[string]*model
	policies map[string]*config.Policy
	replay   *check.Replay
	rec      Recorder
	contam   Contamination
	log      *slog.Logger
	txLog    io.Writer // the transaction lines, encoded here (Options.TransactionLog)
	now      func() time.Time
	mux      *http.ServeMux
	limiter  *tenantLimiter
	budget   *policy.Budget
	inflight *Budget // answers' bytes held in memory, process-wide (budget.go)
	health   Health
	paths    *pathTracker
	observer Observer
	onPath   func(model string, route int)
	checks   checkSet
	tracer   Tracer
	evals    Evals // require_evals' pass state (evals.go)
	clients  map[string]*upstream.Client
	probes   probes          // ProbeProviders' outcomes, for /readyz
	llama    llamaRenderings // llama.cpp providers' renderings, as probed
	// cacheKey makes the tenants' prompt-cache salts; new at every New
	// (see cache.go). cacheHist is what each salt can have cached.
	cacheKey  [32]byte
	cacheHist *check.CacheHistory
	// schemas keeps the clients' compiled schemas (contract.go).
	schemas check.Schemas
	// sharedReplay claims responses across replicas; nil with one replica.
	sharedReplay func(ctx context.Context, key, requestID string, ttl time.Duration) (string, error)
}

// model is a client-facing model with its resolved routes and counter.
type model struct {
	cfg      *config.Model
	capacity int
	counter  tokenize.Counter
	acct     *accounting.Model
	engines  []template.Engine // the routes' engines, each once
	routes   []route
}

type route struct {
	index  int
	cfg    *config.Route
	client *upstream.Client
	prov   *config.Provider
	engine template.Engine // how the provider renders chat
}

// New builds a gateway from validated options.
func New(o Options) (*Gateway, error) {
	c := o.Config
	g := &Gateway{
		cacheHist:    check.NewCacheHistory(),
		cfg:          c,
		keys:         newKeyring(c),
		models:       map[string]*model{},
		policies:     map[string]*config.Policy{},
		replay:       o.Replay,
		rec:          o.Recorder,
		contam:       o.Contamination,
		log:          o.Logger,
		txLog:        o.TransactionLog,
		now:          o.Now,
		limiter:      newTenantLimiter(c.Limits.MaxConcurrentPerTenant),
		budget:       policy.NewBudget(0.2, 10),
		health:       o.Health,
		paths:        newPathTracker(10000),
		observer:     o.Observer,
		onPath:       o.OnPathChange,
		checks:       newCheckSet(o.Checks),
		sharedReplay: o.SharedReplay,
		tracer:       o.Tracer,
		clients:      o.Clients,
	}
	if g.inflight = o.Inflight; g.inflight == nil {
		g.inflight = NewBudget(c.Limits.MaxInflightBytes)
	} else {
		g.inflight.SetMax(c.Limits.MaxInflightBytes)
	}
	if !g.replay.Is(c.Checks.ReplayWindow, c.Checks.ReplayMaxEntries) {
		g.replay = check.NewReplay(c.Checks.ReplayWindow, c.Checks.ReplayMaxEntries)
	}
	rand.Read(g.cacheKey[:]) // never fails (crypto/rand)
	g.keys.fails = o.AuthFailures
	if g.keys.fails == nil {
		g.keys.fails = NewAuthFailures(c.Limits.AuthFailuresPerMinute, o.Now)
	}
	for _, p := range o.KnownPaths {
		g.paths.seed(p.Model, p.Provider, p.ResponseModel, p.Fingerprint)
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.rec == nil {
		return nil, fmt.Errorf("gateway: a Recorder is required")
	}
	providers := map[string]*config.Provider{}
	for i := range c.Providers {
		providers[c.Providers[i].Name] = &c.Providers[i]
	}
	for i := range c.Policies {
		g.policies[c.Policies[i].Name] = &c.Policies[i]
	}
	counters := map[string]tokenize.Counter{}
	for i := range c.Models {
		mc := &c.Models[i]
		ctr, ok := counters[mc.Tokenizer]
		if !ok {
			var err error
			if ctr, err = tokenize.Lookup(mc.Tokenizer); err != nil {
				return nil, fmt.Errorf("model %s: %w", mc.Name, err)
			}
			counters[mc.Tokenizer] = ctr
		}
		m := &model{cfg: mc, capacity: mc.Capacity(), counter: ctr}
		simOnly := true
		for j := range mc.Routes {
			rc := &mc.Routes[j]
			cl, ok := o.Clients[rc.Provider]
			if !ok {
				return nil, fmt.Errorf("model %s: no client for provider %s", mc.Name, rc.Provider)
			}
			prov := providers[rc.Provider]
			e, err := template.ParseEngine(prov.Engine)
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", prov.Name, err)
			}
			if !slices.Contains(m.engines, e) {
				m.engines = append(m.engines, e)
			}
			simOnly = simOnly && prov.Kind == config.KindSim
			m.routes = append(m.routes, route{index: j, cfg: rc, client: cl, prov: prov, engine: e})
		}
		tmpl, err := accounting.LoadTemplate(mc.Tokenizer, mc.ChatTemplate, simOnly)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", mc.Name, err)
		}
		m.acct = accounting.NewModel(ctr, tmpl, accounting.Slack{PerMessage: mc.PromptTokenSlack.PerMessage, Fixed: mc.PromptTokenSlack.Fixed})
		g.models[mc.Name] = m
	}

	mux := http.NewServeMux()
	// Methods are checked by the handlers, not the mux patterns, so that
	// a wrong method gets an OpenAI-shaped error like everything else.
	mux.Handle("/v1/chat/completions", g.proxy(openaiChat))
	mux.Handle("/v1/completions", g.proxy(openaiCompletions))
	mux.Handle("/v1/embeddings", g.proxy(openaiEmbeddings))
	g.mountDialects(mux)
	mux.Handle("/v1/models", g.only(http.MethodGet, g.handle(g.listModels)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /readyz", g.handle(g.ready))
	for pattern, h := range o.Mounts {
		mux.Handle(pattern, h)
	}
	mux.Handle("/", g.handle(func(w http.ResponseWriter, r *http.Request) error {
		return custody.Errorf(custody.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	}))
	g.mux = mux
	return g, nil
}

// only answers other methods than method with a JSON 405.
func (g *Gateway) only(method string, h http.Handler) http.Handler {
	return g.onlyIn(method, openaiChat, h)
}

// onlyIn answers other methods than method with a 405 in dialect d.
func (g *Gateway) onlyIn(method string, d Dialect, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			g.refuse(w, d, &custody.Error{Code: custody.CodeMethodNotAllowed, Message: r.Method + " is not allowed here; use " + method})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the API. A panic in a handler is a bug: it is logged
// with its stack for the operator, and the client gets a plain
// internal_error (never the stack) if nothing was written yet.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			g.log.Error("panic serving a request", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			g.refuse(w, openaiChat, &custody.Error{Code: custody.CodeInternal, Message: "internal error"})
		}
	}()
	if len(r.TransferEncoding) > 0 {
		// Go's server deletes a Content-Length sent beside
		// Transfer-Encoding before any handler sees it, so custody cannot
		// tell that request from a plain chunked one: it closes the
		// connection after either, as RFC 9112 §6.1 requires of the
		// first, so that no bytes framed by the other header are read as
		// a request (smuggling). API clients send Content-Length.
		w.Header().Set("Connection", "close")
	}
	g.mux.ServeHTTP(w, r)
}

// Tenant authenticates r as a tenant (for handlers mounted beside the API).
func (g *Gateway) Tenant(r *http.Request) (*config.Tenant, error) { return g.keys.tenant(r) }

// Admin authenticates r as an admin.
func (g *Gateway) Admin(r *http.Request) error { return g.keys.admin(r) }

// Refuse answers a request to a handler mounted beside the API (the
// admin API) with err, as custody's own endpoints answer, and counts it.
func (g *Gateway) Refuse(w http.ResponseWriter, err error) { g.refuse(w, openaiChat, err) }

// AuthFailures is the gateway's admin-key failure limiter, for the
// console login to share.
func (g *Gateway) AuthFailures() *AuthFailures { return g.keys.fails }

// Replay is the replay check's memory, for the next gateway of a reload
// to keep (Options.Replay).
func (g *Gateway) Replay() *check.Replay { return g.replay }

// Inflight is the budget of answers held in memory, for the next
// gateway of a reload to keep (Options.Inflight) and for the
// custody_inflight_bytes gauge.
func (g *Gateway) Inflight() *Budget { return g.inflight }

// IsAdminKey reports whether key is an admin key (for the console login).
func (g *Gateway) IsAdminKey(key string) bool { return g.keys.isAdmin(key) }

// ready answers /readyz: config loaded (we exist) and the ledger writable.
func (g *Gateway) ready(w http.ResponseWriter, r *http.Request) error {
	if rc, ok := g.rec.(interface{ Ready(context.Context) error }); ok {
		if err := rc.Ready(r.Context()); err != nil {
			return custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger is not writable")
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	// The providers' probes are information, never readiness (probe.go).
	var b bytes.Buffer
	b.WriteString("ready\n")
	writeProbes(&b, g.ProviderProbes())
	// Witnesses are information too: without their quorum no checkpoint
	// is published, but requests are served and recorded.
	if ws, ok := g.rec.(interface{ WitnessStatus(context.Context) error }); ok {
		if err := ws.WitnessStatus(r.Context()); err != nil {
			fmt.Fprintf(&b, "witnesses: %v\n", err)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
