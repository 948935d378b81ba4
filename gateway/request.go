package gateway

import (
	"encoding/json"
	"errors"
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

// readBody reads r's body for every endpoint that takes one (the
// exchange, count_tokens, input_tokens), bounded in size and in time: a
// slow client gets ReadTimeout for its whole body; the deadline is lifted
// before the answer, which may stream for minutes.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(g.now().Add(g.cfg.Limits.ReadTimeout))
	body, err := readAll(http.MaxBytesReader(w, r.Body, g.cfg.Limits.MaxBodyBytes), r.ContentLength, g.cfg.Limits.MaxBodyBytes)
	if err == nil {
		rc.SetReadDeadline(time.Time{})
		return body, nil
	}
	// The connection is in an unknown state: answer and close it, without
	// waiting for the rest of the body (the deadline stays).
	w.Header().Set("Connection", "close")
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
		if err != nil { // (re, which errors.As takes the address of, is made only then)
			var re *template.RaiseError
			if errors.As(err, &re) {
				return nil, custody.Wrap(custody.CodeInvalidRequest, err, "the model's chat template refused the request: "+re.Message)
			}
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

// startPromptWork counts and fingerprints the prompt in a goroutine. The
// work is the exchange's own (x.work): an exchange starts it once.
func (x *exchange) startPromptWork(p *openai.Prompt, pp *accounting.Prepared) *promptWork {
	w := &x.work
	*w = promptWork{done: make(chan struct{}),
		unrendered: pp.Unrendered != nil && !errors.Is(pp.Unrendered, template.ErrClientTemplate)}
	contam, id, tenant := x.g.contam, x.tx.ID, x.tx.Tenant
	raw := "" // the messages' text, which contamination fingerprints
	if w.text, w.rendered = pp.Text(); !w.rendered {
		w.text = promptText(p)
		raw = w.text
	}
	go func() {
		defer close(w.done)
		w.counts = pp.Count()
		if contam != nil {
			if w.rendered {
				raw = promptText(p)
			}
			if sc := contam.Admit(id, tenant, raw); sc != nil {
				w.scanner = &argScanner{Scanner: sc}
			}
		}
	}()
	return w
}

func promptText(p *openai.Prompt) string {
	if len(p.Messages) == 1 {
		return p.Messages[0].Content
	}
	n := 0
	for _, m := range p.Messages {
		n += len(m.Content) + 1
	}
	for _, t := range p.Texts {
		n += len(t) + 1
	}
	var b strings.Builder
	b.Grow(n) // one allocation, where growing as it goes made three
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

// admission is the engines' rule a prompt is held to before forwarding
// (check.Admission): the routes' engines' rule where they share one,
// else custody's own (at most the capacity), which refuses nothing a
// route would admit; and the request's max_tokens where the rule needs
// it (read only then: it costs a pass over the body).
func (x *exchange) admission(body []byte) (check.Admission, int) {
	var rule check.Admission
	for i, rt := range x.model.routes {
		r := check.AdmitUpTo
		switch e := x.g.routeEngine(rt); {
		case rt.prov.Kind == config.KindSim:
			// Renders as llama.cpp does, admits as custody does.
		case e == template.EngineLlamaCpp || e.LlamaCppRendering():
			r = check.AdmitBelow
		case e == template.EngineVLLM:
			r = check.AdmitWithOutput
		}
		if i == 0 {
			rule = r
		} else if r != rule {
			rule = check.AdmitUpTo
		}
	}
	if rule != check.AdmitWithOutput {
		return rule, 0
	}
	var v struct {
		MaxTokens           *int `json:"max_tokens"`
		MaxCompletionTokens *int `json:"max_completion_tokens"`
	}
	if json.Unmarshal(body, &v) != nil {
		return rule, 0
	}
	switch {
	case v.MaxCompletionTokens != nil:
		return rule, *v.MaxCompletionTokens
	case v.MaxTokens != nil:
		return rule, *v.MaxTokens
	}
	return rule, 0
}
