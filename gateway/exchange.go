package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/accounting"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/template"
)

// exchange is the state of one proxied request. It is owned by the
// request's goroutine, except prompt, which the counting goroutine fills
// before closing prompt.done.
type exchange struct {
	g     *Gateway
	front Dialect // the client's
	w     http.ResponseWriter
	r     *http.Request
	tx    *custody.Transaction
	req   Request // the client's, in the front dialect

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
	prompt *promptWork

	cacheKey   string    // the tenant's prompt-cache history key on the route, "" if not isolated
	respCommit hash.Hash // SHA-256(salt || bytes delivered to the client)
	recordable bool      // the transaction goes to the ledger (the caller is a tenant)
	started    bool      // response bytes have been written
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

func (p *promptWork) close() {
	if p.wait().scanner != nil {
		p.scanner.Close()
	}
}

// proxy handles the endpoint (POST) of one front dialect.
func (g *Gateway) proxy(front Dialect) http.Handler {
	return g.onlyIn(http.MethodPost, front, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.serve(front, w, r, nil)
	}))
}

// serve runs one exchange. A canary probe comes with its synthetic tenant
// and the one route it probes; client traffic with neither.
func (g *Gateway) serve(front Dialect, w http.ResponseWriter, r *http.Request, probe *canaryProbe) {
	start := g.now()
	var endSpan func(*custody.Transaction)
	if g.tracer != nil {
		var ctx context.Context
		ctx, endSpan = g.tracer.StartTransaction(r)
		r = r.WithContext(ctx)
	}
	x := &exchange{g: g, front: front, w: w, r: r, probe: probe, tx: &custody.Transaction{
		ID: custody.NewID(start), Time: start.UTC(), Endpoint: front.Endpoint(), Route: -1,
		PromptTokensLocal: -1, PromptTokensReported: -1, CompletionTokens: -1, Canary: probe != nil,
	}}
	err := x.run()
	if err != nil {
		x.fail(err)
	}
	if x.prompt != nil {
		go x.prompt.close() // the detector learns from the finished response
	}
	x.tx.Duration = g.now().Sub(start)
	g.logTransaction(x.tx, err)
	if g.observer != nil && x.recordable {
		g.observer.Transaction(x.tx)
	}
	if endSpan != nil {
		endSpan(x.tx)
	}
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
	release, err := g.limiter.acquire(t.ID)
	if err != nil {
		return err
	}
	defer release()
	body, err := x.readBody()
	if err != nil {
		return err
	}
	reqCommit := sha256.New()
	reqCommit.Write(reqSalt[:])
	reqCommit.Write(body)
	tx.RequestCommitment = reqCommit.Sum(nil)

	req, err := x.front.ParseRequest(body)
	if err != nil {
		return invalidRequest(err)
	}
	x.req = req
	tx.RequestedModel, tx.Stream = req.Model(), req.Stream() && x.front.Traits().Streams
	m, ok := g.models[req.Model()]
	if !ok || !allowed(t, req.Model()) {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "model",
			Message: "the model `" + req.Model() + "` does not exist or you do not have access to it"}
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
	if check.MustCount(prepared.Bytes(counted), m.capacity) {
		// Only a prompt whose bytes could exceed capacity is counted
		// before forwarding, and no further than deciding takes; it is
		// never forwarded if it exceeds.
		least, _ := prepared.Exceeds(m.capacity)
		if err := check.Capacity(least, m.capacity); err != nil {
			tx.Fail(custody.CheckCapacity, custody.CodeContextLengthExceeded, "")
			return err
		}
		tx.Pass(custody.CheckCapacity, "")
	} else {
		tx.Pass(custody.CheckCapacity, "bytes under capacity")
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

// readBody reads the request body, bounded in size and in time: a slow
// client gets ReadTimeout for its whole body; the deadline is lifted
// before the answer, which may stream for minutes.
func (x *exchange) readBody() ([]byte, error) {
	g := x.g
	rc := http.NewResponseController(x.w)
	rc.SetReadDeadline(g.now().Add(g.cfg.Limits.ReadTimeout))
	body, err := readAll(http.MaxBytesReader(x.w, x.r.Body, g.cfg.Limits.MaxBodyBytes), x.r.ContentLength, g.cfg.Limits.MaxBodyBytes)
	if err == nil {
		rc.SetReadDeadline(time.Time{})
		return body, nil
	}
	// The connection is in an unknown state: answer and close it, without
	// waiting for the rest of the body (the deadline stays).
	x.w.Header().Set("Connection", "close")
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil, custody.Wrap(custody.CodeInvalidRequest, err, "the request body was not received in time")
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, custody.Errorf(custody.CodeRequestTooLarge, "the request body is over the limit of %d bytes", g.cfg.Limits.MaxBodyBytes)
	}
	return nil, custody.Wrap(custody.CodeInvalidRequest, err, "the request body could not be read")
}

// readAll reads r whole into one buffer of the announced length where
// the client announced one within the limit (io.ReadAll's doubling would
// hold up to twice a large body at once), growing past it if the
// announcement was short.
func readAll(r io.Reader, announced, limit int64) ([]byte, error) {
	if announced <= 0 || announced > limit {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, announced+1) // +1: reading EOF needs no growth
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// choosePolicy applies the tenant's default policy or the one its
// Custody-Use-Case header names.
func (x *exchange) choosePolicy() error {
	if x.probe != nil {
		x.policy, x.tx.Policy = &canaryPolicy, canaryPolicy.Name
		return nil
	}
	name := x.tenant.Policy
	if uc := x.r.Header.Get("Custody-Use-Case"); uc != "" {
		p, ok := x.tenant.UseCases[uc]
		if !ok {
			return &custody.Error{Code: custody.CodeInvalidRequest, Param: "Custody-Use-Case",
				Message: "unknown use case `" + uc + "` for this tenant"}
		}
		name = p
		x.tx.UseCase = uc
	}
	x.policy = x.g.policies[name]
	x.tx.Policy = name
	return nil
}

// preparePrompt renders the prompt as each of the model's engines
// would. It runs before forwarding: a request the model's own template
// refuses is refused here, as the engine would, and never sent.
func (x *exchange) preparePrompt(p *openai.Prompt, body []byte) (*accounting.Prepared, error) {
	m := x.model
	switch x.front.Traits().Counting {
	case CountChat:
		pp, err := m.acct.PrepareChat(m.engines, p, body)
		var re *template.RaiseError
		if errors.As(err, &re) {
			return nil, custody.Wrap(custody.CodeInvalidRequest, err, "the model's chat template refused the request: "+re.Message)
		}
		if pp.Unrendered != nil && !errors.Is(pp.Unrendered, template.ErrClientTemplate) {
			// The error may quote the prompt: only that it happened is
			// logged.
			x.g.log.Warn("chat template failed; prompt counted without it", "id", x.tx.ID, "model", m.cfg.Name)
		}
		return pp, nil
	case CountPrompts:
		return m.acct.PrepareText(p, true), nil
	}
	return m.acct.PrepareText(p, false), nil
}

// startPromptWork counts and fingerprints the prompt in a goroutine.
func (x *exchange) startPromptWork(p *openai.Prompt, pp *accounting.Prepared) *promptWork {
	w := &promptWork{done: make(chan struct{})}
	contam, id, tenant := x.g.contam, x.tx.ID, x.tx.Tenant
	if w.text, w.rendered = pp.Text(); !w.rendered {
		w.text = promptText(p)
	}
	go func() {
		defer close(w.done)
		w.counts = pp.Count()
		if contam != nil {
			w.scanner = contam.Admit(id, tenant, promptText(p))
		}
	}()
	return w
}

func promptText(p *openai.Prompt) string {
	if len(p.Messages) == 1 {
		return p.Messages[0].Content
	}
	var b strings.Builder
	for _, m := range p.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	for _, t := range p.Texts {
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}

// deliver writes response bytes to the client, committing to them.
func (x *exchange) deliver(b []byte) error {
	x.started = true
	x.respCommit.Write(b)
	_, err := x.w.Write(b)
	return err
}

// recordTimeout bounds the wait for the ledger: past it the ledger is
// unavailable and the request fails closed.
const recordTimeout = 10 * time.Second

// record makes the transaction durable (the response commitment covers
// what was delivered so far).
func (x *exchange) record() error {
	x.tx.ResponseCommitment = x.respCommit.Sum(nil)
	x.tx.Duration = x.g.now().Sub(x.tx.Time)
	// A client that went away does not cancel the record: what the
	// upstream did must be in the ledger either way.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.r.Context()), recordTimeout)
	defer cancel()
	if err := x.g.rec.Record(ctx, x.tx); err != nil {
		return custody.Wrap(custody.CodeLedgerUnavailable, err, "the transaction could not be recorded; nothing was served")
	}
	return nil
}

// fail answers with err (or ends a started stream with it) after
// recording the rejection.
func (x *exchange) fail(err error) {
	if errors.Is(err, context.Canceled) && x.r.Context().Err() != nil {
		err = &custody.Error{Code: custody.CodeClientClosed, Message: "the client closed the connection", Err: err}
	}
	tx, e := x.tx, clientError(err)
	if tx.Verdict != custody.Rejected {
		tx.Verdict, tx.Code = custody.Rejected, e.Code
	}
	tx.Status = e.Status()
	if x.started {
		x.endStreamWithError(e)
		return
	}
	if x.recordable {
		body := x.front.ErrorBody(e)
		x.respCommit.Write(body)
		if rerr := x.record(); rerr != nil {
			x.g.log.Error("rejection not recorded", "id", tx.ID, "code", e.Code, "err", rerr)
			x.recordable = false
		}
	}
	x.setHeaders()
	x.g.writeError(x.w, x.front, e)
}

// setHeaders writes the Custody-* headers of SPEC §3.
func (x *exchange) setHeaders() {
	h, tx := x.w.Header(), x.tx
	h.Set("Custody-Request-Id", tx.ID)
	if tx.Verdict == "" {
		tx.Verdict = custody.Verified
	}
	h.Set("Custody-Verdict", string(tx.Verdict))
	if tx.ResponseModel != "" {
		h.Set("Custody-Model", tx.ResponseModel)
	}
	if tx.Provider != "" {
		h.Set("Custody-Provider", tx.Provider)
	}
	h.Set("Custody-Fallback", tx.FallbackHeader())
	if x.recordable {
		h.Set("Custody-Receipt", "/v1/custody/receipts/"+tx.ID)
	}
	h.Set("Custody-Checks", tx.ChecksHeader())
}

func (g *Gateway) logTransaction(tx *custody.Transaction, err error) {
	attrs := []any{"id", tx.ID, "tenant", tx.Tenant, "endpoint", tx.Endpoint, "model", tx.RequestedModel,
		"provider", tx.Provider, "response_model", tx.ResponseModel, "verdict", tx.Verdict, "status", tx.Status,
		"prompt_tokens_local", tx.PromptTokensLocal, "prompt_tokens_reported", tx.PromptTokensReported,
		"duration_ms", float64(tx.Duration.Microseconds()) / 1000}
	if tx.Code != "" {
		attrs = append(attrs, "code", tx.Code)
	}
	if len(tx.FallbackChain) > 1 {
		attrs = append(attrs, "fallback", tx.FallbackHeader())
	}
	if err != nil {
		if e := clientError(err); e.Err != nil {
			attrs = append(attrs, "cause", e.Err.Error())
		}
	}
	g.log.Info("transaction", attrs...)
}
