package gateway

import (
	"bytes"
	"crypto/sha256"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/sse"
)

// EndpointMessages is the ledger's endpoint of POST /v1/messages.
const EndpointMessages = "messages"

// messages is the Anthropic Messages front (POST /v1/messages): passed
// through to kind: anthropic providers, translated to chat completions
// for every other kind.
var messages = &messagesDialect{}

var (
	_ Dialect    = (*messagesDialect)(nil)
	_ Translator = (*messagesDialect)(nil)
)

type messagesDialect struct{}

func (*messagesDialect) Endpoint() string { return EndpointMessages }
func (*messagesDialect) Path() string     { return "/messages" }

// Traits: a Messages upstream has no cache_salt, so custody's prompt
// cache isolation applies on the translated (chat) wire only.
func (*messagesDialect) Traits() Traits {
	return Traits{Streams: true, Counting: CountChat, Generates: true}
}

func (*messagesDialect) ParseRequest(body []byte) (Request, error) {
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		return nil, err
	}
	return &messagesRequest{r: r}, nil
}

func (*messagesDialect) ParseResponse(body []byte) (Reading, error) {
	r, err := anthropic.ParseResponse(body)
	if err != nil {
		return Reading{}, err
	}
	rd := Reading{ID: r.ID, Model: r.Model, Texts: messagesTexts(nil, body, false), Shape: r.Failure(), Messages: r}
	if r.StopReason != nil && *r.StopReason != "" {
		rd.Finish = []string{*r.StopReason}
	}
	if r.Usage != nil {
		rd.Usage = &Usage{Prompt: r.Usage.Prompt(), Completion: r.Usage.OutputTokens, Cached: r.Usage.Cached()}
	}
	return rd, nil
}

func (*messagesDialect) NewStreamReader() StreamReader { return &messagesStream{} }

func (*messagesDialect) ErrorBody(e *custody.Error) []byte   { return anthropic.ErrorBody(e) }
func (*messagesDialect) StreamError(e *custody.Error) []byte { return anthropic.ErrorEvent(e) }

// StreamVerdict: SSE comments, which Anthropic's SDKs skip as every SSE
// client does.
func (*messagesDialect) StreamVerdict(tx *custody.Transaction) []byte {
	return openaiChat.StreamVerdict(tx)
}

// Wire: a kind: anthropic provider speaks Messages; any other speaks chat.
func (*messagesDialect) Wire(p *config.Provider) (Dialect, Bridge) {
	if p.Kind == config.KindAnthropic {
		return nil, nil
	}
	return openaiChat, &messagesBridge{}
}

// messagesRequest is a parsed Messages request.
type messagesRequest struct {
	r *anthropic.Request
	// chat and chatErr are r's translation, made once: the prompt is
	// counted on it and the bridge sends it.
	chat       []byte
	chatErr    error
	translated bool
}

// toChat is r.ToChat, once.
func (q *messagesRequest) toChat() ([]byte, error) {
	if !q.translated {
		q.chat, q.chatErr = q.r.ToChat()
		q.translated = true
	}
	return q.chat, q.chatErr
}

func (q *messagesRequest) Body() []byte       { return q.r.Body }
func (q *messagesRequest) Model() string      { return q.r.Model }
func (q *messagesRequest) Stream() bool       { return q.r.Stream }
func (q *messagesRequest) IncludeUsage() bool { return true } // Messages streams always carry usage

// Prompt counts the chat the request means (anthropic.CountingChat).
func (q *messagesRequest) Prompt() (*openai.Prompt, []byte, error) {
	chat, err := q.toChat()
	if err != nil {
		chat = q.r.CountingChat()
	}
	p, err := openai.ParsePrompt(openai.EndpointChat, chat)
	return p, chat, err
}

// Upstream is the body with the route's model; a Messages upstream has no
// cache members, so set is ignored.
func (q *messagesRequest) Upstream(model string, _ ...openai.Member) []byte {
	return q.r.WithModel(model)
}
func (q *messagesRequest) Digest(model string) [32]byte { return sha256.Sum256(q.Upstream(model)) }

// messagesStream reads a Messages upstream's stream through the
// event-order validator.
type messagesStream struct {
	v            anthropic.StreamValidator
	texts        []Text // reused across events
	spliced, out []byte // reused across events
}

func (s *messagesStream) Read(name, data []byte) (Event, error) {
	typ, data, err := namedEvent(name, data, &s.spliced)
	if err != nil {
		return Event{}, err
	}
	if err := s.v.Event(data); err != nil {
		return Event{}, err
	}
	// Every event's texts: a block's start and deltas, and whatever text
	// an upstream puts in any other event a client reads.
	ev := Event{Reading: Reading{Texts: messagesTexts(s.texts[:0], data, true)}}
	s.texts = ev.Texts
	s.out = sse.AppendNamed(s.out[:0], typ, data)
	ev.Out = s.out
	switch typ {
	case "ping":
		ev.KeepAlive = true
	case "message_start":
		ev.ID, ev.Model = s.v.ID, s.v.Model
	case "message_delta":
		u := s.v.Usage
		ev.Usage = &Usage{Prompt: u.Prompt(), Completion: u.OutputTokens, Cached: u.Cached()}
		if s.v.StopReason != "" {
			ev.Finish = []string{s.v.StopReason}
		}
	case "message_stop":
		ev.Terminal = true
		ev.End = sse.AppendNamed(nil, "message_stop", data)
	}
	return ev, nil
}

func (s *messagesStream) End(sawUsage bool) error {
	if err := s.v.End(); err != nil {
		return err
	}
	if !sawUsage {
		return custody.Errorf(custody.CodeStreamInconsistent, "the Messages stream carried no usage")
	}
	return nil
}

// messagesBridge translates one Messages exchange to chat and back; it
// keeps the parsed request, which says how the answer is written
// (thinking.display).
type messagesBridge struct {
	req *anthropic.Request
}

func (b *messagesBridge) Request(req Request) ([]byte, error) {
	q := req.(*messagesRequest)
	b.req = q.r
	return q.toChat()
}

func (b *messagesBridge) Response(wire []byte, rd *Reading) ([]byte, error) {
	if rd == nil || rd.Chat == nil {
		return b.req.FromChat(wire)
	}
	return b.req.FromChatResponse(rd.Chat)
}

func (b *messagesBridge) NewStream() StreamBridge {
	return &messagesStreamBridge{t: b.req.NewStreamTranslator()}
}

// Applied names the members the translation carried as something else or
// proved no-ops.
func (*messagesBridge) Applied(req Request) string { return req.(*messagesRequest).r.Applied() }

// appliedNamer is a bridge that names what its translation did with the
// request's members (anthropic.Request.Applied, responses.Request.Applied).
type appliedNamer interface {
	Applied(req Request) string
}

// noteTranslation records, once, what b's translation of req did with its
// members: an ok outcome of custody.CheckTranslation whose detail (names
// only) Custody-Checks and the leaf carry.
func noteTranslation(tx *custody.Transaction, b Bridge, req Request) {
	a, ok := b.(appliedNamer)
	if !ok {
		return
	}
	for _, o := range tx.Outcomes {
		if o.Check == custody.CheckTranslation {
			return
		}
	}
	if names := a.Applied(req); names != "" {
		tx.Pass(custody.CheckTranslation, names)
	}
}

type messagesStreamBridge struct {
	t *anthropic.StreamTranslator
}

func (b *messagesStreamBridge) Event(data []byte, ev *Event) ([]byte, error) {
	return translateChunk(b.t, data, ev)
}

func (b *messagesStreamBridge) End() []byte {
	out, err := b.t.End()
	if err != nil {
		// The chat stream ended without a finish_reason, which the chat
		// checks let through: no stop_reason can be invented for it.
		return anthropic.ErrorEvent(custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's stream has no finish_reason"))
	}
	return bytes.Clone(out)
}
