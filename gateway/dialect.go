package gateway

import (
	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/responses"
)

// Dialect is one wire format of the exchange: what differs between OpenAI
// chat, completions and embeddings, Anthropic Messages and OpenAI
// Responses. The exchange (exchange.go) is written once, against this
// interface: it authenticates, reads the body, asks the dialect to parse
// it, routes, forwards, has the dialect read the upstream's answer for the
// checks, records, and delivers, writing errors and the end of a stream in
// the dialect of the client.
//
// A request meets two dialects, which are often one:
//
//   - the front: what the client speaks, chosen by the path it called. It
//     parses the client's request, writes every error the client gets, and
//     writes the stream's end (verdict comments, the terminal event) and
//     its in-stream error.
//   - the wire: what the route's provider speaks for that front, chosen per
//     attempt (Translator.Wire). The request the upstream receives is
//     parsed by the wire (model rewrite, cache members, usage request,
//     replay digest), and the wire reads the upstream's response and
//     stream events for the checks.
//
// When the two are the same dialect (OpenAI chat to an OpenAI-compatible
// provider, Messages to a kind: anthropic provider) the exchange is
// pass-through: the checks read the front's own response shape, and a
// plain answer's bytes are delivered as they came; a stream's events are
// delivered as custody read them, re-framed canonically (Event.Out). When they differ (a
// Messages client in front of a kind: openai provider), the front
// implements Translator: the client's body is translated to the wire's
// before it is forwarded, the prompt is counted on the translated body
// (the front's Request.Prompt does the translation and returns the chat
// body it counts), the checks run on the wire's response as the upstream
// sent it, and only then is the answer translated back (Bridge) for the
// client; a stream is checked event by event on the wire and translated
// event by event for the client. The response commitment covers the bytes
// the client received.
//
// Implementations are stateless and safe for concurrent use; per-stream
// state lives in the StreamReader and StreamBridge they make.
type Dialect interface {
	// Endpoint is the transaction's endpoint as recorded in the ledger,
	// e.g. "chat.completions" (openai.Endpoint*).
	Endpoint() string
	// Path is where a provider that speaks this dialect serves it, under
	// its base URL, e.g. "/chat/completions".
	Path() string
	// Traits are the dialect's fixed properties.
	Traits() Traits
	// ParseRequest reads a client's (or, for the wire, the translated)
	// request body, validated but not re-encoded. Its error's message is
	// safe to show the client (it never quotes the body); the exchange
	// answers it as invalid_request.
	ParseRequest(body []byte) (Request, error)
	// ParseResponse reads a complete 200 response: identity, usage, text
	// and shape. Its error is a *custody.Error: response_ambiguous for
	// duplicate or variant checked members, upstream_error_as_success for
	// a body that is not a response at all.
	ParseResponse(body []byte) (Reading, error)
	// NewStreamReader reads one upstream stream, event by event.
	NewStreamReader() StreamReader
	// ErrorBody is e as a complete error response body.
	ErrorBody(e *custody.Error) []byte
	// StreamError is e as the one event that ends a started stream (no
	// terminal event follows it, so that SDKs raise).
	StreamError(e *custody.Error) []byte
	// StreamVerdict is what a stream carries once its transaction is
	// recorded, before its terminal event: the receipt and the verdict
	// with its checks (README.md, Talk to it). The response commitment covers the bytes
	// before it.
	StreamVerdict(tx *custody.Transaction) []byte
}

// Traits are what the exchange needs to know of a dialect beyond parsing.
type Traits struct {
	// Streams: a request may ask for a stream (embeddings never stream).
	Streams bool
	// Counting is how the prompt's tokens are counted.
	Counting Counting
	// PromptCache: the upstream may serve the prompt from a prefix cache,
	// which custody isolates per tenant and checks (cache.go).
	PromptCache bool
	// Generates: responses carry generated text, which the contamination
	// check scans.
	Generates bool
}

// Counting is how accounting counts a prompt.
type Counting int

const (
	// CountChat renders the messages with the model's chat template.
	CountChat Counting = iota
	// CountPrompts counts each prompt text with its own framing
	// (legacy completions).
	CountPrompts
	// CountInputs counts the input texts as they are (embeddings).
	CountInputs
)

// Request is a parsed request body.
type Request interface {
	// Body is the request's bytes, as received.
	Body() []byte
	// Model is the client-facing model asked for.
	Model() string
	// Stream reports whether the request asks for a stream.
	Stream() bool
	// IncludeUsage reports whether the client itself asked for a stream's
	// usage; when not, the usage custody asks for is not relayed.
	IncludeUsage() bool
	// Prompt is the prompt as accounting counts it and the body a chat
	// template renders (for a translating front: the translated chat
	// body). Its error's message is safe to show the client.
	Prompt() (*openai.Prompt, []byte, error)
	// Upstream is the body to forward: model replaced by upstreamModel, a
	// stream's usage requested, and each of set written over the client's
	// value (set holds members the request located: openai.Member names
	// such as cache_salt). A dialect without such a member ignores it.
	Upstream(upstreamModel string, set ...openai.Member) []byte
	// Digest is the SHA-256 of the request as the upstream receives it
	// under upstreamModel, for the replay check's body claims.
	Digest(upstreamModel string) [32]byte
}

// Reading is what the checks read in an upstream's response, or in one
// event of its stream, whatever its dialect.
type Reading struct {
	ID, Model, Fingerprint string
	// Usage is nil when the response (or event) reports none.
	Usage *Usage
	// Texts are every text the client receives (content, reasoning,
	// refusals, tool names and arguments, logprob tokens, ...), for the
	// contamination scan; in an event, valid until the next Read.
	Texts []Text
	// Choices is the number of choices (a chat or completions
	// response's; in a stream, the highest choice index so far plus one),
	// for the exchange to hold to what the request asked for; 0 for
	// dialects without choices.
	Choices int
	// Shape is nil for a success; else why a 200 is not one
	// (upstream_error_as_success: an error body, no choices, an abort).
	// Set by ParseResponse; an event's shape failure is Read's error.
	Shape error
	// Chat is the chat wire's response as its checks decoded it (nil
	// from other wires), for the contract check.
	Chat *openai.Response
	// Messages is the Messages wire's response as its checks decoded it
	// (nil from other wires and from a Messages stream's events), for the
	// contract check.
	Messages *anthropic.Response
	// Responses is the Responses wire's plain response as its checks
	// decoded it (nil from other wires and from stream events), for the
	// contract check.
	Responses *responses.Response
	// Finish are the finish reasons the response (or event) carries, one
	// per choice that finished in it (chat and completions'
	// finish_reason, Messages' stop_reason); none from the Responses
	// wire. The exchange keeps them in the transaction, for its span.
	Finish []string
}

// Text is one text of a response or event that a client receives.
type Text struct {
	Place
	S string
	// Whole marks a complete value (a plain body's, a stream's summary
	// event's), scanned as a text of its own whatever its place.
	Whole bool
}

// Place is where a text belongs in a response. The texts of one place in
// successive events of a stream continue each other (a client joins
// them: the deltas of one content, of one tool call's arguments); texts
// of different places never run together, so each is scanned as its own
// text.
type Place struct {
	// Field is the member, e.g. "content", "thinking",
	// "tool_calls.function.arguments".
	Field string
	// Choice is the choice (chat) or output item / content block.
	Choice int
	// Index tells apart texts of one field of one choice: a tool call's
	// index, an alternative token's rank.
	Index int
}

// appendText appends a text at p, unless it is empty.
func appendText(dst []Text, field string, choice, index int, s string) []Text {
	if s == "" {
		return dst
	}
	return append(dst, Text{Place: Place{field, choice, index}, S: s})
}

// Usage is an upstream's token accounting.
type Usage struct {
	Prompt, Completion int
	// Cached is the prompt tokens served from the upstream's cache.
	Cached int
}

func (u *Usage) cached() int {
	if u == nil {
		return 0
	}
	return u.Cached
}

// StreamReader checks and reads one upstream stream. It owns the stream's
// consistency state (one id, one model, events in order).
type StreamReader interface {
	// Read reads one event as sse.Reader dispatched it: its name (the
	// "event" field, empty if none) and its data. An error is a
	// *custody.Error: the event is inconsistent with the stream
	// (stream_inconsistent, a name that disagrees with the data's type
	// included), has ambiguous members (response_ambiguous) or reports a
	// failure (upstream_error_as_success). The event's slices are valid
	// until the next Read.
	Read(name, data []byte) (Event, error)
	// End checks the whole stream after its terminal event: sawUsage
	// reports whether any event carried usage.
	End(sawUsage bool) error
}

// Event is one upstream stream event as read.
type Event struct {
	Reading
	// Terminal is set on the stream's terminal event ([DONE],
	// message_stop). It is not relayed as it came: the exchange writes
	// End, after the verdict, once the transaction is recorded.
	Terminal bool
	// End is what the client receives in place of a terminal event.
	End []byte
	// KeepAlive marks an event that only holds the connection open
	// (Anthropic's ping): it does not reset the stream's idle limit.
	KeepAlive bool
	// UsageOnly marks an event that carries nothing but usage, which
	// custody asked for: relayed only if the client asked too.
	UsageOnly bool
	// Chunk is the chat wire's chunk as its checks decoded it (nil from
	// other wires), for a bridge from chat to read instead of decoding
	// the same bytes again; valid until the next Read.
	Chunk *openai.Response
	// Out is the event as a pass-through client receives it: what Read
	// checked, in the canonical framing (sse.AppendData, or
	// sse.AppendNamed where the dialect names its events), never the
	// upstream's own bytes. Valid until the next Read.
	Out []byte
}

// Translator is implemented by a front dialect that can reach providers
// that speak another wire format (Messages in front of kind: openai).
type Translator interface {
	// Wire returns, for provider p, the dialect p speaks for this front
	// and the bridge to it; a nil Bridge means p speaks the front itself
	// (pass-through, and wire is the front).
	Wire(p *config.Provider) (wire Dialect, b Bridge)
}

// Bridge translates one front's exchanges to a wire dialect and back.
type Bridge interface {
	// Request translates the client's request, as the front parsed it,
	// to the wire's body (not yet rewritten for a route: the wire's
	// Request does that): the front's parse is the one reading of the
	// client's bytes. Its error's message is safe to show the client
	// (invalid_request).
	Request(req Request) ([]byte, error)
	// Response translates the wire's checked 200 body to the front's,
	// reading what the wire's checks read (rd, from its ParseResponse),
	// so that what the client gets is what was checked.
	Response(wire []byte, rd *Reading) ([]byte, error)
	// NewStream translates one stream.
	NewStream() StreamBridge
}

// StreamBridge translates one checked wire stream to the front's events.
type StreamBridge interface {
	// Event is what the client receives for one checked wire event (data
	// as the reader dispatched it, ev as Read read it): none, one or
	// several front events, in the canonical framing.
	Event(data []byte, ev *Event) ([]byte, error)
	// End is what the client receives in place of the wire's terminal
	// event, after the verdict.
	End() []byte
}

// wireOf is the dialect provider p speaks for front f, and the bridge to
// it (nil: pass-through).
func wireOf(f Dialect, p *config.Provider) (Dialect, Bridge) {
	if t, ok := f.(Translator); ok {
		if w, b := t.Wire(p); b != nil {
			return w, b
		}
	}
	return f, nil
}

// maxFinishReasons bounds the finish reasons a transaction keeps: one a
// choice, and a stream can repeat them without end.
const maxFinishReasons = 64

// keepFinish appends the finish reasons of a response or event to kept,
// each bounded (custody.Bound: an upstream chose it), up to
// maxFinishReasons.
func keepFinish(kept, finish []string) []string {
	for _, f := range finish {
		if len(kept) >= maxFinishReasons {
			break
		}
		kept = append(kept, custody.Bound(f))
	}
	return kept
}
