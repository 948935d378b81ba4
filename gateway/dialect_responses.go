package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/responses"
	"github.com/custody-gateway/custody/sse"
)

// EndpointResponses is the ledger's endpoint of POST /v1/responses.
const EndpointResponses = "responses"

// responsesFront is the OpenAI Responses front (POST /v1/responses):
// passed through to providers with responses: true, translated
// statelessly to chat completions for the others.
var responsesFront = &responsesDialect{}

var (
	_ Dialect    = (*responsesDialect)(nil)
	_ Translator = (*responsesDialect)(nil)
)

type responsesDialect struct{}

func (*responsesDialect) Endpoint() string { return EndpointResponses }
func (*responsesDialect) Path() string     { return "/responses" }
func (*responsesDialect) Traits() Traits {
	return Traits{Streams: true, Counting: CountChat, Generates: true}
}

func (*responsesDialect) ParseRequest(body []byte) (Request, error) {
	r, err := responses.ParseRequest(body)
	if err != nil {
		return nil, err
	}
	return &responsesRequest{r: r}, nil
}

func (*responsesDialect) ParseResponse(body []byte) (Reading, error) {
	r, err := responses.ParseResponse(body)
	if err != nil {
		return Reading{}, err
	}
	rd := responseReading(r, responsesTexts(nil, body, false))
	rd.Responses = r
	return rd, nil
}

// responseReading is r as the checks read it, with texts, its body's.
func responseReading(r *responses.Response, texts []Text) Reading {
	rd := Reading{ID: r.ID, Model: r.Model, Texts: texts, Shape: r.Failure()}
	if r.Usage != nil {
		rd.Usage = &Usage{Prompt: r.Usage.InputTokens, Completion: r.OutputTokens(), Cached: r.Cached()}
	}
	return rd
}

func (*responsesDialect) NewStreamReader() StreamReader { return &responsesStream{} }

func (*responsesDialect) ErrorBody(e *custody.Error) []byte { return responses.ErrorBody(e) }

// StreamError is an error event that also carries the error object, on
// which the OpenAI SDKs raise.
func (*responsesDialect) StreamError(e *custody.Error) []byte {
	var env map[string]json.RawMessage
	_ = json.Unmarshal(responses.ErrorBody(e), &env)
	return sse.AppendEvent(nil, "error", map[string]any{"type": "error", "code": string(e.Code),
		"message": e.Message, "param": nil, "error": env["error"]})
}

func (*responsesDialect) StreamVerdict(tx *custody.Transaction) []byte {
	return openaiChat.StreamVerdict(tx)
}

// Wire: a provider with responses: true speaks Responses; any other
// speaks chat.
func (*responsesDialect) Wire(p *config.Provider) (Dialect, Bridge) {
	if p.Responses {
		return nil, nil
	}
	return openaiChat, &responsesBridge{}
}

type responsesRequest struct {
	r *responses.Request
}

func (q *responsesRequest) Body() []byte       { return q.r.Body }
func (q *responsesRequest) Model() string      { return q.r.Model }
func (q *responsesRequest) Stream() bool       { return q.r.Stream }
func (q *responsesRequest) IncludeUsage() bool { return true }
func (q *responsesRequest) Prompt() (*openai.Prompt, []byte, error) {
	chat := q.r.CountingChat()
	p, err := openai.ParsePrompt(openai.EndpointChat, chat)
	return p, chat, err
}
func (q *responsesRequest) Upstream(model string, _ ...openai.Member) []byte {
	return q.r.WithModel(model)
}
func (q *responsesRequest) Digest(model string) [32]byte { return sha256.Sum256(q.Upstream(model)) }

// responsesStream reads a Responses upstream's stream through the stream
// validator. The usage is in the terminal event's Response.
type responsesStream struct {
	v            responses.StreamValidator
	texts        []Text // reused across events
	spliced, out []byte // reused across events
}

func (s *responsesStream) Read(name, data []byte) (Event, error) {
	typ, data, err := namedEvent(name, data, &s.spliced)
	if err != nil {
		return Event{}, err
	}
	if err := s.v.Event(data); err != nil {
		return Event{}, err
	}
	// Every event's texts: the deltas of each part, and the whole texts
	// of the events that repeat them (a client may read either).
	texts := responsesTexts(s.texts[:0], data, true)
	s.texts = texts
	s.out = sse.AppendNamed(s.out[:0], typ, data)
	ev := Event{Reading: Reading{Texts: texts}, Out: s.out}
	switch typ {
	case "response.created":
		ev.ID, ev.Model = s.v.ID, s.v.Model
	case "response.in_progress":
		ev.Model = s.v.Model // when created named none
	case "response.completed", "response.incomplete", "response.failed":
		ev.Reading = responseReading(s.v.Response, texts)
		ev.Terminal = true
		ev.End = sse.AppendNamed(nil, typ, data)
	}
	return ev, nil
}

func (s *responsesStream) End(sawUsage bool) error {
	if err := s.v.End(); err != nil {
		return err
	}
	if !sawUsage {
		return custody.Errorf(custody.CodeStreamInconsistent, "the Responses stream carried no usage")
	}
	return nil
}

// responsesBridge translates one Responses exchange to chat and back; it
// keeps the parsed request, whose settings the Response echoes.
type responsesBridge struct {
	req *responses.Request
}

func (b *responsesBridge) Request(req Request) ([]byte, error) {
	b.req = req.(*responsesRequest).r
	return b.req.ToChat()
}

func (b *responsesBridge) Response(wire []byte, rd *Reading) ([]byte, error) {
	if rd == nil || rd.Chat == nil {
		return b.req.FromChat(wire, chatCreated(wire))
	}
	return b.req.FromChatResponse(rd.Chat, rd.Chat.Created)
}

func (b *responsesBridge) NewStream() StreamBridge { return &responsesStreamBridge{req: b.req} }

// Applied names the members the translation carried as something else or
// proved no-ops.
func (*responsesBridge) Applied(req Request) string { return req.(*responsesRequest).r.Applied() }

// chatCreated is a chat completion's created, the Response's created_at.
func chatCreated(chat []byte) int64 {
	var c struct {
		Created int64 `json:"created"`
	}
	_ = json.Unmarshal(chat, &c)
	return c.Created
}

type responsesStreamBridge struct {
	req *responses.Request
	t   *responses.StreamTranslator
}

func (b *responsesStreamBridge) Event(data []byte, ev *Event) ([]byte, error) {
	if b.t == nil {
		created := int64(0)
		if ev.Chunk != nil {
			created = ev.Chunk.Created
		} else {
			created = chatCreated(data)
		}
		b.t = b.req.NewStreamTranslator(created)
	}
	return translateChunk(b.t, data, ev)
}

func (b *responsesStreamBridge) End() []byte {
	if b.t == nil {
		return nil
	}
	out, err := b.t.End()
	if err != nil {
		return bytes.Clone(b.t.EndFailed())
	}
	return bytes.Clone(out)
}
