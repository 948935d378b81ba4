package gateway

import (
	"context"
	"crypto/sha256"
	"hash"
	"net/http"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/accounting"
	"github.com/custody-gateway/custody/config"
)

// outcomesPerTransaction is the room made for a transaction's outcomes:
// the checks of a plain chat completion with every check on (prompt
// tokens, model, request id, replay, contamination, shape and the rest).
const outcomesPerTransaction = 12

// exchange is the state of one proxied request. It is owned by the
// request's goroutine, except prompt, which the counting goroutine fills
// before closing prompt.done.
type exchange struct {
	g     *Gateway
	front Dialect // the client's
	w     http.ResponseWriter
	r     *http.Request
	tx    *custody.Transaction // &txv
	req   Request              // the client's, in the front dialect

	txv      custody.Transaction
	outcomes [outcomesPerTransaction]custody.Outcome // txv.Outcomes' first room
	chain    [2]string                               // txv.FallbackChain's first room: a route and its fallback
	finish   [1]string                               // txv.FinishReasons' first room: a plain answer's one choice

	// Of the current attempt (attempt.go): the dialect the route's
	// provider speaks, the request as it receives it, and the bridge to
	// it (nil: pass-through, wire is front and wreq is req).
	wire   Dialect
	wreq   Request
	bridge Bridge

	tenant *config.Tenant
	probe  *canaryProbe // set for canary traffic
	model  *model
	policy *config.Policy
	prompt *promptWork // nil or &work
	work   promptWork

	contract   contractStream // a stream's answer joined for the contract check (contract.go)
	noContract bool           // the stream's wire has no contract (or the check is off)
	cacheKey   string         // the tenant's prompt-cache history key on the route, "" if not isolated
	hold       *hold          // the current attempt's share of the in-flight budget (budget.go): nil or &held
	held       hold           // hold's storage
	respCommit hash.Hash      // SHA-256(salt || bytes delivered to the client)
	recordable bool           // the transaction goes to the ledger (the caller is a tenant)
	started    bool           // response bytes have been written
}

// promptWork counts a prompt and fingerprints it, concurrently with
// forwarding when the prompt is small enough to skip the wait.
type promptWork struct {
	done    chan struct{}
	counts  accounting.Counts
	scanner Scanner
	// text is the prompt as the cache check hashes it: the first
	// rendering where custody renders it (rendered), else its texts. Set
	// before the work starts; read-only.
	text     string
	rendered bool
	// unrendered: the model has a template custody could not render this
	// prompt with (nested past the renderer's depth, a feature its Jinja
	// engine lacks), so the count is the untemplated band's, not the
	// exact one. Set before the work starts; read-only.
	unrendered bool
}

func (p *promptWork) wait() *promptWork { <-p.done; return p }

// ready returns the scanner without waiting, and whether the work is done.
func (p *promptWork) ready() (Scanner, bool) {
	select {
	case <-p.done:
		return p.scanner, true
	default:
		return nil, false
	}
}

// close finishes the scanner; learn says the detector may learn from the
// response (Scanner.Close).
func (p *promptWork) close(learn bool) {
	if p.wait().scanner != nil {
		p.scanner.Close(learn)
	}
}

// proxy handles the endpoint (POST) of one front dialect.
func (g *Gateway) proxy(front Dialect) http.Handler {
	return g.onlyIn(http.MethodPost, front, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.serve(front, w, r, nil)
	}))
}

// serve runs one exchange and returns its finished transaction (which
// the caller must not change). A canary probe comes with its synthetic
// tenant and the one route it probes; client traffic with neither.
func (g *Gateway) serve(front Dialect, w http.ResponseWriter, r *http.Request, probe *canaryProbe) *custody.Transaction {
	start := g.now()
	var endSpan func(*custody.Transaction)
	if g.tracer != nil {
		var ctx context.Context
		ctx, endSpan = g.tracer.StartTransaction(r)
		r = r.WithContext(ctx)
	}
	x := &exchange{g: g, front: front, w: w, r: r, probe: probe}
	// The transaction and the room for its outcomes are the exchange's
	// own (one allocation, not three).
	x.txv = custody.Transaction{
		ID: custody.NewID(start), Time: start.UTC(), Endpoint: front.Endpoint(), Route: -1,
		PromptTokensLocal: -1, PromptTokensReported: -1, CompletionTokens: -1, Canary: probe != nil, Sender: probe.senderOf(),
		// Room for every check's outcome at once: appending them one by
		// one reallocated the slice four times a request.
		Outcomes: x.outcomes[:0],
	}
	x.tx = &x.txv
	err := x.run()
	if err != nil {
		x.fail(err)
	}
	if x.prompt != nil {
		// The detector learns from a served response, or one refused for
		// its contamination only (which teaches through the detector's
		// tenant bound: never for this tenant); not from one refused for
		// anything else.
		learn := x.tx.Verdict == custody.Verified || x.tx.Code == custody.CodeCrossRequestContamination
		go x.prompt.close(learn)
	}
	x.tx.Duration = g.now().Sub(start)
	g.logTransaction(x.tx, err)
	if g.observer != nil {
		// Unrecorded refusals (unauthorized) too: the metric counts
		// every code.
		g.observer.Transaction(x.tx)
	}
	if endSpan != nil {
		endSpan(x.tx)
	}
	return x.tx
}

func (x *exchange) run() error {
	g, tx := x.g, x.tx
	t, err := x.authenticate()
	if err != nil {
		return err // not recorded: no tenant to charge it to
	}
	reqSalt, respSalt := g.rec.Salts(tx.ID)
	x.respCommit = sha256.New()
	x.respCommit.Write(respSalt[:])
	x.tenant, tx.Tenant, x.recordable = t, t.ID, true
	if err := g.limiter.acquire(t.ID); err != nil {
		return err
	}
	defer g.limiter.release(t.ID)
	body, err := x.g.readBody(x.w, x.r)
	if err != nil {
		return err
	}
	// The request commitment is hashed with the response's hash, which
	// holds only its salt until an answer is written: reset, used, and
	// given its salt again (one hash a request, not two).
	h := x.respCommit
	h.Reset()
	h.Write(reqSalt[:])
	h.Write(body)
	tx.RequestCommitment = h.Sum(nil)
	h.Reset()
	h.Write(respSalt[:])

	req, err := x.front.ParseRequest(body)
	if err != nil {
		return invalidRequest(err)
	}
	x.req = req
	tx.RequestedModel, tx.Stream = custody.Bound(req.Model()), req.Stream() && x.front.Traits().Streams
	m, err := g.tenantModel(t, req.Model(), custody.CodeInvalidRequest)
	if err != nil {
		return err
	}
	x.model = m
	if err := x.choosePolicy(); err != nil {
		return err
	}
	prompt, counted, err := req.Prompt()
	if err != nil {
		return invalidRequest(err)
	}
	prepared, err := x.preparePrompt(prompt, counted)
	if err != nil {
		return err
	}
	if err := x.checkCapacity(prepared, counted); err != nil {
		return err // never forwarded
	}
	x.prompt = x.startPromptWork(prompt, prepared)
	return x.forward()
}

// authenticate finds the caller's tenant (a canary brings its own).
func (x *exchange) authenticate() (*config.Tenant, error) {
	if x.probe != nil {
		return x.probe.tenant, nil
	}
	return x.g.keys.tenant(x.r)
}
