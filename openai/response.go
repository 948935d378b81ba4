package openai

import (
	"encoding/json"

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
	Index        int     `json:"index"`
	FinishReason string  `json:"finish_reason"`
	Message      Content `json:"message"`
	Delta        Content `json:"delta"`
	Text         string  `json:"text"` // legacy completions
}

// Content is a message or a delta.
type Content struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

// Embedding is one element of an embeddings list.
type Embedding struct {
	Index int `json:"index"`
}

// ToolCall is a tool call of a message, or a piece of one in a delta.
type ToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Usage is the token accounting the upstream reports.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
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
	}
	r.HasChoices = r.Choices != nil
	return checkResponseMembers(b)
}

// Text is the generated text of every choice, concatenated: the message
// content, the delta content or the legacy text.
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
