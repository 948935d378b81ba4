package gateway

import (
	"errors"
	"math"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/sse"
	"github.com/custody-gateway/custody/upstream"
)

// The OpenAI dialects: chat completions, legacy completions, embeddings.
// They speak their own wire to every provider kind custody has today, so
// none of them translates.
var (
	openaiChat = &openaiDialect{endpoint: openai.EndpointChat, path: "/chat/completions",
		traits: Traits{Streams: true, Counting: CountChat, PromptCache: true, Generates: true}}
	openaiCompletions = &openaiDialect{endpoint: openai.EndpointCompletions, path: "/completions",
		traits: Traits{Streams: true, Counting: CountPrompts, PromptCache: true, Generates: true}}
	openaiEmbeddings = &openaiDialect{endpoint: openai.EndpointEmbeddings, path: "/embeddings",
		traits: Traits{Counting: CountInputs}}
)

var _ Dialect = (*openaiDialect)(nil)

type openaiDialect struct {
	endpoint, path string
	traits         Traits
}

func (d *openaiDialect) Endpoint() string { return d.endpoint }
func (d *openaiDialect) Path() string     { return d.path }
func (d *openaiDialect) Traits() Traits   { return d.traits }

func (d *openaiDialect) ParseRequest(body []byte) (Request, error) {
	r, err := openai.ParseRequest(body)
	if err != nil {
		return nil, err
	}
	return &openaiRequest{r: r, endpoint: d.endpoint}, nil
}

func (d *openaiDialect) ParseResponse(body []byte) (Reading, error) {
	r, err := openai.ParseResponse(body)
	if err != nil {
		return Reading{}, responseError(err, custody.CodeUpstreamErrorAsSuccess, "a 200 whose body is not a response")
	}
	rd := readingOf(r, nil)
	rd.Shape = check.Shape(d.endpoint, r)
	rd.Chat = r
	return rd, nil
}

func (d *openaiDialect) NewStreamReader() StreamReader { return &openaiStream{} }

func (d *openaiDialect) ErrorBody(e *custody.Error) []byte {
	return openai.ErrorBody(e.Message, e.Code.Type(), string(e.Code), e.Param)
}

func (d *openaiDialect) StreamError(e *custody.Error) []byte {
	return sse.Data(d.ErrorBody(e))
}

func (d *openaiDialect) StreamVerdict(tx *custody.Transaction) []byte {
	return append(sse.ReceiptComment(tx.ID), sse.VerdictComment(string(tx.Verdict), tx.ChecksHeader())...)
}

// responseError is the *custody.Error of an upstream body (or chunk) that
// does not parse: ambiguous members, or notJSON. The message names the
// member, never its value; the exchange prefixes the provider.
func responseError(err error, notJSON custody.Code, msg string) *custody.Error {
	var ae *openai.AmbiguousError
	if errors.As(err, &ae) {
		return custody.Errorf(custody.CodeResponseAmbiguous, "an ambiguous body: %s", ae.Detail)
	}
	if errors.Is(err, openai.ErrAmbiguous) {
		return custody.Errorf(custody.CodeResponseAmbiguous, "an ambiguous body: ambiguous members")
	}
	return custody.Errorf(notJSON, "%s", msg)
}

// readingOf is r as the checks read it; its texts are appended to texts
// (nil, or a stream's buffer from the previous event, emptied).
func readingOf(r *openai.Response, texts []Text) Reading {
	r.EachText(func(field string, choice, index int, s string) {
		texts = appendText(texts, field, choice, index, s)
	})
	rd := Reading{ID: r.ID, Model: r.Model, Fingerprint: r.SystemFingerprint, Texts: texts, Choices: len(r.Choices)}
	for i := range r.Choices {
		if f := r.Choices[i].FinishReason; f != "" {
			rd.Finish = append(rd.Finish, f)
		}
	}
	if r.Usage != nil {
		rd.Usage = &Usage{Prompt: r.Usage.PromptTokens, Completion: r.Usage.CompletionTokens, Cached: r.Usage.Cached()}
	}
	return rd
}

// openaiRequest is a parsed OpenAI request.
type openaiRequest struct {
	r        *openai.Request
	endpoint string
}

func (q *openaiRequest) Body() []byte       { return q.r.Body }
func (q *openaiRequest) Model() string      { return q.r.Model }
func (q *openaiRequest) Stream() bool       { return q.r.Stream }
func (q *openaiRequest) IncludeUsage() bool { return q.r.IncludeUsage }
func (q *openaiRequest) Prompt() (*openai.Prompt, []byte, error) {
	p, err := q.r.Prompt(q.endpoint)
	return p, q.r.Body, err
}
func (q *openaiRequest) Upstream(model string, set ...openai.Member) []byte {
	return q.r.Rewrite(model, set...)
}
func (q *openaiRequest) Digest(model string) [32]byte { return q.r.Digest(model) }

// Choices is the chat request's n; -1 (not known) for legacy completions,
// whose choices are n for each of several prompts.
func (q *openaiRequest) Choices() int {
	if q.endpoint != openai.EndpointChat {
		return -1
	}
	return q.r.N
}

// openaiStream reads an OpenAI SSE stream: one chunk per data event,
// [DONE] at the end. Event names are not part of the OpenAI wire: the
// canonical relay drops them, so the client reads the data custody read.
type openaiStream struct {
	ident check.Stream
	chunk openai.Response // reused across events
	texts []Text          // reused across events
	index int             // the highest choice index so far, plus one
	out   []byte          // reused across events
}

func (s *openaiStream) Read(_, data []byte) (Event, error) {
	if string(data) == "[DONE]" {
		return Event{Terminal: true, End: sse.Done}, nil
	}
	if err := s.chunk.Decode(data); err != nil {
		// As a plain body that is not a response: the same fault, the
		// same outcome.
		return Event{}, responseError(err, custody.CodeUpstreamErrorAsSuccess, "a chunk that is not a response")
	}
	if err := s.ident.Chunk(&s.chunk); err != nil {
		if e := s.chunk.Error; e != nil && e.Message != "" {
			// An engine's error event (llama.cpp's after a 200): its own
			// words, sanitised, go to the client as a refusal's do.
			return Event{}, &custody.Error{Code: custody.CodeOf(err), Message: clientError(err).Message,
				Err: engineSaid(upstream.Sanitize(e.Message))}
		}
		return Event{}, err
	}
	c := &s.chunk
	rd := readingOf(c, s.texts[:0])
	s.texts = rd.Texts
	for i := range c.Choices {
		// A negative index is no choice a client can place: counted
		// past any n, so that it is refused.
		if ix := c.Choices[i].Index; ix < 0 {
			s.index = math.MaxInt
		} else if ix >= s.index && s.index != math.MaxInt {
			s.index = ix + 1
		}
	}
	rd.Choices = s.index
	s.out = sse.AppendData(s.out[:0], data)
	return Event{Reading: rd, UsageOnly: c.Usage != nil && len(c.Choices) == 0, Chunk: c, Out: s.out}, nil
}

func (s *openaiStream) End(sawUsage bool) error { return s.ident.End(sawUsage, true) }
