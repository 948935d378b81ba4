package anthropic

import (
	"encoding/json"
	"errors"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/strict"
)

// Response is what custody checks in a Messages response from a
// Messages upstream, the contract check included (check.MessagesAnswer
// reads it instead of decoding the body again).
type Response struct {
	Type       string  `json:"type"`
	ID         string  `json:"id"`
	Model      string  `json:"model"`
	Role       string  `json:"role"`
	StopReason *string `json:"stop_reason"`
	// StopSequence is stop_sequence as it came, any JSON value (nil when
	// absent): the contract reads it as a string, and a value of another
	// type is the contract's to judge, not a failure to parse.
	StopSequence json.RawMessage `json:"stop_sequence"`
	Usage        *ResponseUsage  `json:"usage"`
	Content      []ResponseBlock `json:"content"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// ResponseUsage is a response's usage: Usage, and whether output_tokens
// was given at all (the contract tells a count not reported from 0).
type ResponseUsage struct {
	Usage
	// Output is output_tokens, nil when absent or null;
	// Usage.OutputTokens is its value, or 0.
	Output *int `json:"output_tokens"`
}

// counts is the usage with output_tokens in Usage.OutputTokens (where
// the decoder left it for Output, the shallower of the two).
func (u *ResponseUsage) counts() Usage {
	c := u.Usage
	if u.Output != nil {
		c.OutputTokens = *u.Output
	}
	return c
}

// ResponseBlock is a content block of a response. Name, like StopSequence, is
// kept as it came (a tool_use block's is a string): no value of a member
// only the contract reads fails the parse.
type ResponseBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  json.RawMessage `json:"name"`
	Input json.RawMessage `json:"input"`
}

// responseMembers are the members of a response (or a stream event)
// custody checks.
var responseMembers = func() strict.Members {
	usage := strict.Members{"input_tokens": nil, "output_tokens": nil, "cache_read_input_tokens": nil,
		"cache_creation_input_tokens": nil}
	message := strict.Members{"type": nil, "id": nil, "model": nil, "role": nil, "stop_reason": nil,
		"usage": usage, "content": {"type": nil, "text": nil, "name": nil, "input": nil},
		"stop_sequence": nil, "error": {"type": nil, "message": nil}}
	event := strict.Members{"type": nil, "index": nil, "message": message, "usage": usage,
		"delta":         {"type": nil, "text": nil, "partial_json": nil, "stop_reason": nil, "stop_sequence": nil},
		"content_block": {"type": nil, "text": nil, "name": nil, "input": nil},
		"error":         {"type": nil, "message": nil}}
	for k, v := range message {
		if _, ok := event[k]; !ok {
			event[k] = v
		}
	}
	return event
}()

// ParseResponse decodes a Messages response body. A body that is not a
// JSON object is upstream_error_as_success; one with an ambiguous checked
// member is response_ambiguous.
func ParseResponse(b []byte) (*Response, error) {
	r := &Response{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's answer is not a Messages response")
	}
	if r.Usage != nil {
		r.Usage.Usage = r.Usage.counts()
	}
	if err := strict.Check(b, responseMembers); err != nil {
		return nil, custody.Errorf(custody.CodeResponseAmbiguous, "upstream body: ambiguous members: %s", err)
	}
	return r, nil
}

// Text is the text of the response's text blocks, concatenated.
func (r *Response) Text() string {
	s := ""
	for _, c := range r.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}

// Failure is the success-shape check: a 200 whose body is an error
// (type error), is not a message, has no stop_reason or an unknown one,
// or stopped at max_tokens (or the context window) having written
// nothing. It returns an upstream_error_as_success error, or nil.
func (r *Response) Failure() error {
	switch {
	case r.Type == "error" || r.Error != nil:
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream answered 200 with an error body")
	case r.Type != "message":
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's answer is not a message")
	case r.StopReason == nil:
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's message has no stop_reason")
	}
	var u *Usage
	if r.Usage != nil {
		u = &r.Usage.Usage
	}
	return stopFailure(*r.StopReason, u)
}

func stopFailure(stop string, u *Usage) error {
	switch stop {
	case StopEndTurn, StopSequence, StopToolUse, StopPauseTurn, StopRefusal:
		return nil
	case StopMaxTokens, StopContextLimit:
		if u != nil && u.OutputTokens > 0 {
			return nil
		}
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream stopped (%s) with no output", stop)
	}
	return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's stop_reason is not one of Anthropic's")
}

// IsAmbiguous reports whether err is a response_ambiguous error.
func IsAmbiguous(err error) bool {
	var e *custody.Error
	return errors.As(err, &e) && e.Code == custody.CodeResponseAmbiguous
}
