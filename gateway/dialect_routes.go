package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/responses"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/upstream"
)

// mountDialects serves the Anthropic Messages and OpenAI Responses fronts
// and the endpoints that go with them.
func (g *Gateway) mountDialects(mux *http.ServeMux) {
	mux.Handle("/v1/messages", g.proxy(messages))
	mux.Handle("/v1/messages/count_tokens", g.onlyIn(http.MethodPost, messages, g.handleIn(messages, g.countTokens(messagesCount))))
	mux.Handle("/v1/responses", g.proxy(responsesFront))
	mux.Handle("/v1/responses/input_tokens", g.onlyIn(http.MethodPost, responsesFront, g.handleIn(responsesFront, g.countTokens(responsesCount))))
	mux.Handle("/v1/responses/{id}", g.onlyIn(http.MethodGet, responsesFront, g.handleIn(responsesFront, g.getResponse)))
	mux.Handle("/v1/models/{id}", g.only(http.MethodGet, g.handle(g.getModel)))
}

// handleIn is handle with errors written in dialect d.
func (g *Gateway) handleIn(d Dialect, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			g.writeError(w, d, err)
		}
	})
}

// getResponse answers GET /v1/responses/{id}: custody keeps no response
// text, so there is nothing to retrieve.
func (g *Gateway) getResponse(w http.ResponseWriter, r *http.Request) error {
	if _, err := g.keys.tenant(r); err != nil {
		return err
	}
	return custody.Errorf(custody.CodeNotFound, "custody does not store responses (no conversation text at rest); the receipt of a request is at /v1/custody/receipts/{request_id}")
}

// getModel answers GET /v1/models/{id} for a model the tenant may use, in
// a shape both SDKs read (OpenAI's id/object/owned_by, Anthropic's
// type/display_name/created_at).
func (g *Gateway) getModel(w http.ResponseWriter, r *http.Request) error {
	t, err := g.keys.tenant(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, err := g.tenantModel(t, id, custody.CodeNotFound); err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "custody",
		"type": "model", "display_name": id, "created_at": "1970-01-01T00:00:00Z"})
}

// countEndpoint is one dialect's count-tokens endpoint: POST
// /v1/messages/count_tokens (messagesCount) and POST
// /v1/responses/input_tokens (responsesCount). custody answers locally
// where it counts the prompt exactly (the model has a chat template and
// its first route an engine that renders it: llamacpp, vllm, sglang,
// sim); else from the first route whose provider counts it itself; else
// 501. Nothing is generated, so nothing is recorded.
type countEndpoint struct {
	parse func(body []byte) (model string, req countRequest, err error)
	// answer is the body of a local count of n tokens.
	answer func(n int) any
	// counts says whether a route's provider counts the prompt itself,
	// at path (under the provider's base URL); counter names such a
	// route in the 501.
	counts  func(p *config.Provider) bool
	path    string
	counter string
}

// countRequest is a parsed count-tokens request.
type countRequest interface {
	ToChat() ([]byte, error)
	WithModel(model string) []byte
}

var (
	messagesCount = countEndpoint{
		parse:   countParser(anthropic.ParseCountTokens, func(r *anthropic.Request) string { return r.Model }),
		answer:  func(n int) any { return map[string]int{"input_tokens": n} },
		counts:  func(p *config.Provider) bool { return p.Kind == config.KindAnthropic },
		path:    "/messages/count_tokens",
		counter: "kind: anthropic route",
	}
	responsesCount = countEndpoint{
		parse:   countParser(responses.ParseRequest, func(r *responses.Request) string { return r.Model }),
		answer:  func(n int) any { return map[string]any{"object": "response.input_tokens", "input_tokens": n} },
		counts:  func(p *config.Provider) bool { return p.Responses },
		path:    "/responses/input_tokens",
		counter: "route with responses: true",
	}
)

// countParser is a dialect's parser as a countEndpoint's parse; model
// reads the request's model.
func countParser[R countRequest](parse func([]byte) (R, error), model func(R) string) func([]byte) (string, countRequest, error) {
	return func(body []byte) (string, countRequest, error) {
		req, err := parse(body)
		if err != nil {
			return "", nil, err
		}
		return model(req), req, nil
	}
}

// countTokens serves e: the one count-tokens handler of every dialect.
func (g *Gateway) countTokens(e countEndpoint) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		t, err := g.keys.tenant(r)
		if err != nil {
			return err
		}
		body, err := g.readBody(w, r)
		if err != nil {
			return err
		}
		name, req, err := e.parse(body)
		if err != nil {
			return err
		}
		m, err := g.tenantModel(t, name, custody.CodeInvalidRequest)
		if err != nil {
			return err
		}
		if n, ok := g.countLocally(m, req); ok {
			return writeJSON(w, e.answer(n))
		}
		for _, rt := range m.routes {
			if e.counts(rt.prov) {
				return g.forwardCount(w, r.Context(), rt, e.path, req.WithModel(rt.cfg.Model))
			}
		}
		return &custody.Error{Code: custody.CodeInvalidRequest, HTTPStatus: http.StatusNotImplemented, Param: "model",
			Message: "custody cannot count the prompt of model " + name + " exactly (no chat template, or its route's engine is auto or openai) and no " + e.counter + " can count it"}
	}
}

// countLocally is the prompt's exact count, when custody has one.
func (g *Gateway) countLocally(m *model, req interface{ ToChat() ([]byte, error) }) (int, bool) {
	if len(m.routes) == 0 || m.acct.Template == nil {
		return 0, false
	}
	e := g.routeEngine(m.routes[0])
	if e != template.EngineLlamaCpp && e != template.EngineVLLM && e != template.EngineSGLang && !e.LlamaCppRendering() {
		return 0, false
	}
	chat, err := req.ToChat() // a request chat cannot say is not counted exactly
	if err != nil {
		return 0, false
	}
	p, err := openai.ParsePrompt(openai.EndpointChat, chat)
	if err != nil {
		return 0, false
	}
	pp, err := m.acct.PrepareChat([]template.Engine{e}, p, chat)
	if err != nil {
		return 0, false
	}
	if _, rendered := pp.Text(); !rendered {
		return 0, false
	}
	return pp.Count().For(e).Local, true
}

// forwardCount relays the count of a route whose provider counts.
func (g *Gateway) forwardCount(w http.ResponseWriter, ctx context.Context, rt route, path string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, rt.prov.Timeout)
	defer cancel()
	resp, err := rt.client.Do(ctx, upstream.Call{Path: path, Body: body, RequestID: custody.NewID(g.now())})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		ref := upstream.ReadRefusal(resp.StatusCode, raw, rt.client.Config().APIKey)
		return &custody.Error{Code: custody.CodeUpstreamRejected, HTTPStatus: resp.StatusCode,
			Message: "provider " + rt.cfg.Provider + " refused the count: " + ref.Message}
	}
	var out struct {
		InputTokens *int `json:"input_tokens"`
	}
	if json.Unmarshal(raw, &out) != nil || out.InputTokens == nil {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "provider %s answered the count without input_tokens", rt.cfg.Provider)
	}
	w.Header().Set("Custody-Provider", rt.cfg.Provider)
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(raw)
	return nil
}

// invalidRequest is a parse or translation error as the client gets it:
// a dialect's own *custody.Error as it is (its param kept: an
// invalid_request, or a not_found such as a Messages thread custody
// does not keep), any other error as invalid_request with its message.
func invalidRequest(err error) error {
	var e *custody.Error
	if errors.As(err, &e) && (e.Code == custody.CodeInvalidRequest || e.Code == custody.CodeNotFound) {
		return e
	}
	return custody.Wrap(custody.CodeInvalidRequest, err, err.Error())
}

// uncounted says why the prompt-token check cannot run on the route that
// answered, or "": a kind: anthropic provider whose engine is not one
// custody renders exactly (auto, openai) serves Claude models, whose
// tokenizer is not public. custody says so rather than guess a band.
func (x *exchange) uncounted() string {
	r := x.tx.Route
	if r < 0 || r >= len(x.model.routes) {
		return ""
	}
	rt := x.model.routes[r]
	if rt.prov.Kind != config.KindAnthropic {
		return ""
	}
	switch rt.engine {
	case template.EngineAuto, template.EngineOpenAI:
		return "custody cannot count this provider's prompts (Anthropic's tokenizer is not public); set the provider's engine for a Messages-compatible engine it can render"
	}
	return ""
}
