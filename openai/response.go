package openai

import (
	"encoding/json"
	"strings"

	"github.com/custody-gateway/custody/internal/jsonscan"
	"github.com/custody-gateway/custody/internal/jsonvalid"
)

// Response is what custody checks in a completion, a chat completion, an
// embeddings response or one stream chunk.
type Response struct {
	ID                string    `json:"id"`
	Object            string    `json:"object"`
	Created           int64     `json:"created"`
	Model             string    `json:"model"`
	SystemFingerprint string    `json:"system_fingerprint"`
	Choices           []Choice  `json:"choices"`
	Usage             *Usage    `json:"usage"`
	Error             *APIError `json:"error"`
	// Data is the embeddings list; only its length is used.
	Data []Embedding `json:"data"`
	// HasChoices is set when the choices field was present (a stream's
	// usage chunk carries an empty list).
	HasChoices bool `json:"-"`
}

// Choice is one choice of a response or chunk.
type Choice struct {
	Index int `json:"index"`
	// FinishReason is "" when absent or null.
	FinishReason string  `json:"finish_reason"`
	Message      Content `json:"message"`
	Delta        Content `json:"delta"`
	Text         string  `json:"text"` // legacy completions
	// Logprobs carries tokens, which are text the client receives like
	// the content they spell (and alternatives it does not spell).
	Logprobs *Logprobs `json:"logprobs"`
	// HasMessage is set when the message member was present and not
	// null (a chat completion without one is not an answer).
	HasMessage bool `json:"-"`
}

// Content is a message or a delta: every member of it that carries text
// to a client is here, so that the contamination scan reads what the
// client reads (a member custody does not decode is a member no client
// SDK shows).
type Content struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ReasoningContent (vLLM, llama.cpp, DeepSeek) and Reasoning
	// (OpenRouter, newer vLLM) are the model's reasoning text.
	ReasoningContent string        `json:"reasoning_content"`
	Reasoning        string        `json:"reasoning"`
	Refusal          string        `json:"refusal"`
	ToolCalls        []ToolCall    `json:"tool_calls"`
	FunctionCall     *FunctionCall `json:"function_call"` // the deprecated single call
	Audio            *struct {
		Transcript string `json:"transcript"`
	} `json:"audio"`
}

// FunctionCall is a tool call's function, or a message's deprecated
// function_call.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Logprobs is a choice's logprobs: chat's content and refusal token
// lists, or legacy completions' tokens.
type Logprobs struct {
	Content []TokenLogprob `json:"content"`
	Refusal []TokenLogprob `json:"refusal"`
	Tokens  []string       `json:"tokens"` // legacy completions
}

// TokenLogprob is one token of a chat logprobs list and its
// alternatives.
type TokenLogprob struct {
	Token       string `json:"token"`
	TopLogprobs []struct {
		Token string `json:"token"`
	} `json:"top_logprobs"`
}

// Embedding is one element of an embeddings list.
type Embedding struct {
	Index int `json:"index"`
}

// ToolCall is a tool call of a message, or a piece of one in a delta.
type ToolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id"`
	Function FunctionCall `json:"function"`
}

// Usage is the token accounting the upstream reports.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// CompletionTokensDetails is nil when the upstream does not report
	// it (llama.cpp); its ReasoningTokens are the reasoning's share of
	// CompletionTokens (vLLM, DeepSeek, OpenRouter).
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// Cached is usage.prompt_tokens_details.cached_tokens (0 when absent).
func (u *Usage) Cached() int {
	if u == nil || u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// APIError is the error object of an OpenAI-shaped error body.
type APIError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// ParseResponse decodes the fields custody checks. Unknown fields are
// skipped; a body that is not a JSON object is an ErrBadRequest; one
// whose checked members are duplicated or written in a case or escape
// variant is an ErrAmbiguous.
func ParseResponse(b []byte) (*Response, error) {
	r := &Response{}
	if err := r.Decode(b); err != nil {
		return nil, err
	}
	return r, nil
}

// Decode decodes b into r, reusing r's storage: a stream decodes each
// chunk into the Response of the one before, whose id, model and
// fingerprint strings the next chunk's equal ones then share.
func (r *Response) Decode(b []byte) error {
	prev := Response{ID: r.ID, Model: r.Model, SystemFingerprint: r.SystemFingerprint}
	*r = Response{}
	if !jsonvalid.Valid(b) || !scanResponseAfter(b, r, &prev) {
		*r = Response{}
		if err := json.Unmarshal(b, r); err != nil {
			return badf("upstream body: %s", typeError(err))
		}
		markMessages(b, r)
	}
	r.HasChoices = r.Choices != nil
	return checkResponseMembers(b)
}

// Text fields, as EachText names them.
const (
	FieldContent          = "content"
	FieldReasoningContent = "reasoning_content"
	FieldReasoning        = "reasoning"
	FieldRefusal          = "refusal"
	FieldText             = "text" // legacy completions
	FieldToolName         = "tool_calls.function.name"
	FieldToolArguments    = "tool_calls.function.arguments"
	FieldFunctionName     = "function_call.name"
	FieldFunctionArgs     = "function_call.arguments"
	FieldAudioTranscript  = "audio.transcript"
	FieldLogprobToken     = "logprobs.token"
	FieldTopLogprobToken  = "logprobs.top_logprobs.token"
)

// EachText calls fn with every text of r that a client receives, in
// order, with where it belongs: the field, the choice's index and, for a
// tool call, its index (a delta's index member; a message's position in
// its list), for an alternative token its rank (content's; 64+rank for
// the refusal's), for the token lists 0 (content, legacy), 1 (refusal).
// Texts of one (field, choice, index) in successive chunks of a stream
// continue each other, as a client joins them; texts of different places
// never do. Empty texts are skipped.
//
// The contamination scan reads these and only these: a field added to
// Content must be added here, or a client reads text nobody scanned.
func (r *Response) EachText(fn func(field string, choice, index int, text string)) {
	emit := func(field string, choice, index int, text string) {
		if text != "" {
			fn(field, choice, index, text)
		}
	}
	content := func(c *Content, choice int, delta bool) {
		emit(FieldContent, choice, 0, c.Content)
		emit(FieldReasoningContent, choice, 0, c.ReasoningContent)
		emit(FieldReasoning, choice, 0, c.Reasoning)
		emit(FieldRefusal, choice, 0, c.Refusal)
		for i := range c.ToolCalls {
			tc := &c.ToolCalls[i]
			at := i
			if delta {
				at = tc.Index
			}
			emit(FieldToolName, choice, at, tc.Function.Name)
			emit(FieldToolArguments, choice, at, tc.Function.Arguments)
		}
		if f := c.FunctionCall; f != nil {
			emit(FieldFunctionName, choice, 0, f.Name)
			emit(FieldFunctionArgs, choice, 0, f.Arguments)
		}
		if c.Audio != nil {
			emit(FieldAudioTranscript, choice, 0, c.Audio.Transcript)
		}
	}
	for i := range r.Choices {
		c := &r.Choices[i]
		content(&c.Message, c.Index, false)
		content(&c.Delta, c.Index, true)
		emit(FieldText, c.Index, 0, c.Text)
		if lp := c.Logprobs; lp != nil {
			for list, toks := range [2][]TokenLogprob{lp.Content, lp.Refusal} {
				for j := range toks {
					emit(FieldLogprobToken, c.Index, list, toks[j].Token)
					for k, top := range toks[j].TopLogprobs {
						emit(FieldTopLogprobToken, c.Index, 64*list+k, top.Token)
					}
				}
			}
			for _, tok := range lp.Tokens {
				emit(FieldLogprobToken, c.Index, 0, tok)
			}
		}
	}
}

// Text is the content, delta content or legacy text of every choice,
// concatenated (what a chat-to-other-dialect check reads as the answer;
// the contamination scan reads EachText).
func (r *Response) Text() string {
	switch len(r.Choices) {
	case 0:
		return ""
	case 1:
		c := &r.Choices[0]
		return c.Message.Content + c.Delta.Content + c.Text
	}
	s := ""
	for i := range r.Choices {
		c := &r.Choices[i]
		s += c.Message.Content + c.Delta.Content + c.Text
	}
	return s
}

// markMessages sets HasMessage on the choices json.Unmarshal filled (b is
// valid JSON, decoded into r): the choices whose message member is
// present and not null. Members are matched as encoding/json matched
// them (case-folded); a variant is refused by the strict check anyway.
func markMessages(b []byte, r *Response) {
	i := jsonscan.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	_ = eachMember(b, i, func(key []byte, vs, ve int) error {
		if !strings.EqualFold(string(key), "choices") || b[vs] != '[' {
			return nil
		}
		return eachElement(b, vs, func(k, es int) error {
			if k >= len(r.Choices) || b[es] != '{' {
				return nil
			}
			return eachMember(b, es, func(key []byte, vs, ve int) error {
				if strings.EqualFold(string(key), "message") && b[vs] == '{' {
					r.Choices[k].HasMessage = true
				}
				return nil
			})
		})
	})
}
