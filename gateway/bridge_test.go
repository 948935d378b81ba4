package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/openai"
)

// textFront is a front dialect that no provider speaks, to prove the
// exchange's translating path: {"model","input","stream"} in front of an
// OpenAI chat wire, answered {"model","output"} (a stream as "event:
// text" events and one "event: done"), errors Anthropic-shaped.
type textFront struct{}

func (textFront) Endpoint() string { return "test.text" }
func (textFront) Path() string     { return "/text" }
func (textFront) Traits() Traits {
	return Traits{Streams: true, Counting: CountChat, PromptCache: true, Generates: true}
}

func (textFront) ParseRequest(body []byte) (Request, error) {
	var q struct {
		Model  string `json:"model"`
		Input  string `json:"input"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &q); err != nil || q.Model == "" {
		return nil, fmt.Errorf("%w: want {model, input}", openai.ErrBadRequest)
	}
	chat, err := textToChat(body)
	if err != nil {
		return nil, err
	}
	return &textRequest{body: body, model: q.Model, stream: q.Stream, chat: chat}, nil
}

func (textFront) ParseResponse(body []byte) (Reading, error) {
	return Reading{}, custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "no provider speaks test.text")
}
func (textFront) NewStreamReader() StreamReader { return nil }
func (textFront) ErrorBody(e *custody.Error) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": e.Code.Type(), "message": string(e.Code) + ": " + e.Message}})
	return b
}
func (f textFront) StreamError(e *custody.Error) []byte {
	return append(append([]byte("event: error\ndata: "), f.ErrorBody(e)...), '\n', '\n')
}
func (textFront) StreamVerdict(tx *custody.Transaction) []byte { return openaiChat.StreamVerdict(tx) }
func (textFront) Wire(p *config.Provider) (Dialect, Bridge)    { return openaiChat, textBridge{} }

type textRequest struct {
	body, chat []byte
	model      string
	stream     bool
}

func (q *textRequest) Body() []byte       { return q.body }
func (q *textRequest) Model() string      { return q.model }
func (q *textRequest) Stream() bool       { return q.stream }
func (q *textRequest) IncludeUsage() bool { return false }
func (q *textRequest) Prompt() (*openai.Prompt, []byte, error) {
	p, err := openai.ParsePrompt(openai.EndpointChat, q.chat) // counted as translated
	return p, q.chat, err
}
func (q *textRequest) Upstream(string, ...openai.Member) []byte {
	panic("the wire's request is forwarded")
}
func (q *textRequest) Digest(string) [32]byte { panic("the wire's request is digested") }

func textToChat(body []byte) ([]byte, error) {
	var q struct {
		Model  string `json:"model"`
		Input  string `json:"input"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"model": q.Model, "stream": q.Stream, "messages": []any{map[string]any{"role": "user", "content": q.Input}}})
}

type textBridge struct{}

func (textBridge) Request(req Request) ([]byte, error) { return textToChat(req.Body()) }
func (textBridge) Response(wire []byte, _ *Reading) ([]byte, error) {
	r, err := openai.ParseResponse(wire)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"model": r.Model, "output": r.Text()})
}
func (textBridge) NewStream() StreamBridge { return textStream{} }

type textStream struct{}

func (textStream) Event(raw []byte, ev *Event) ([]byte, error) {
	if ev.Chunk == nil || ev.Chunk.Text() == "" {
		return nil, nil
	}
	b, _ := json.Marshal(map[string]string{"t": ev.Chunk.Text()})
	return fmt.Appendf(nil, "event: text\ndata: %s\n\n", b), nil
}
func (textStream) End() []byte { return []byte("event: done\ndata: {}\n\n") }

func textHarness(t *testing.T) *harness {
	h := newHarness(t, testConfig)
	h.gw.mux.Handle("/v1/text", h.gw.proxy(textFront{}))
	return h
}

// TestTranslatedFrontPlain: a front the provider does not speak is
// translated to chat, counted on the chat body, checked on the chat
// response as the upstream sent it, and answered in its own shape.
func TestTranslatedFrontPlain(t *testing.T) {
	h := textHarness(t)
	resp, body := h.do("POST", "/v1/text", "sk-acme", `{"model":"small","input":"hello bridge"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var out struct{ Model, Output string }
	if err := json.Unmarshal([]byte(body), &out); err != nil || out.Model != "small" || !strings.Contains(out.Output, "hello bridge") {
		t.Errorf("not the front's shape: %s", body)
	}
	if up := string(*h.primary.body.Load()); !strings.Contains(up, `"messages"`) {
		t.Errorf("upstream got %s, want a chat body", up)
	}
	tx := h.rec.last(t)
	if tx.Endpoint != "test.text" || tx.Verdict != custody.Verified || tx.PromptTokensLocal != tx.PromptTokensReported || tx.PromptTokensLocal <= 0 {
		t.Errorf("recorded %+v", tx)
	}
	if got, want := resp.Header.Get("Custody-Checks"), "capacity=ok;request_id=ok;shape=ok;model=ok;replay=ok;prompt_tokens=ok;contract=ok"; got != want {
		t.Errorf("Custody-Checks %q, want %q", got, want)
	}
}

// TestTranslatedFrontFault: a failing check on the wire's response is
// answered in the front's error shape.
func TestTranslatedFrontFault(t *testing.T) {
	h := textHarness(t)
	h.primary.mutate = func(resp map[string]any, _ *http.Request) { resp["model"] = "other" }
	resp, body := h.do("POST", "/v1/text", "sk-acme", `{"model":"small","input":"hi"}`)
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	if resp.StatusCode != 502 || json.Unmarshal([]byte(body), &e) != nil || e.Type != "error" || !strings.HasPrefix(e.Error.Message, "model_mismatch:") {
		t.Errorf("status %d, body %s", resp.StatusCode, body)
	}
	if !strings.Contains(resp.Header.Get("Custody-Checks"), "model=model_mismatch") {
		t.Errorf("Custody-Checks %q", resp.Header.Get("Custody-Checks"))
	}
	_, body = h.do("POST", "/v1/text", "sk-acme", `{"model":"nope","input":"hi"}`)
	if !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "invalid_request") {
		t.Errorf("unknown model answered %s", body)
	}
}

// TestTranslatedFrontStream: a stream is checked chunk by chunk on the
// wire and delivered as the front's events; its end comes after the
// verdict, in the front's dialect.
func TestTranslatedFrontStream(t *testing.T) {
	h := textHarness(t)
	resp, body := h.do("POST", "/v1/text", "sk-acme", `{"model":"small","input":"hi","stream":true}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	want := "event: text\ndata: {\"t\":\"Hello\"}\n\nevent: text\ndata: {\"t\":\" there\"}\n\n: custody-receipt "
	if !strings.HasPrefix(body, want) || !strings.HasSuffix(body, "event: done\ndata: {}\n\n") || strings.Contains(body, "[DONE]") || strings.Contains(body, "chat.completion") {
		t.Errorf("stream:\n%s", body)
	}
	if !strings.Contains(body, ": custody-verdict verified checks=") {
		t.Errorf("no verdict in:\n%s", body)
	}
	tx := h.rec.last(t)
	if tx.Verdict != custody.Verified || tx.PromptTokensLocal != tx.PromptTokensReported {
		t.Errorf("recorded %+v", tx)
	}
}

// TestNotAResponseSameOutcome: an upstream body that is not a response is
// shape=upstream_error_as_success, plain or as a stream's chunk.
func TestNotAResponseSameOutcome(t *testing.T) {
	h := newHarness(t, testConfig)
	h.primary.mutate = func(resp map[string]any, _ *http.Request) { resp["choices"] = "not a list" }
	h.primary.stream = func(w io.Writer, id string, usage int) {
		io.WriteString(w, "data: {\"choices\":7}\n\ndata: [DONE]\n\n")
	}
	for _, stream := range []bool{false, true} {
		resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", stream))
		checks := resp.Header.Get("Custody-Checks")
		if resp.StatusCode != 502 || errCode(t, body) != "upstream_error_as_success" || !strings.Contains(checks, "shape=upstream_error_as_success") {
			t.Errorf("stream %v: %d %s %s", stream, resp.StatusCode, checks, body)
		}
	}
}
