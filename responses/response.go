package responses

import (
	"encoding/json"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/strict"
)

// Response is what custody checks in a Response object from an upstream
// that speaks Responses, the contract check included
// (check.ResponsesAnswer reads it instead of decoding the body again).
type Response struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Status string `json:"status"`
	Model  string `json:"model"`
	Usage  *struct {
		InputTokens int `json:"input_tokens"`
		// OutputTokens is nil when absent or null (the contract tells a
		// count not reported from 0); Response.OutputTokens reads it.
		OutputTokens       *int `json:"output_tokens"`
		InputTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
	Output []struct {
		Type string `json:"type"`
		// Name and Arguments (a function_call's strings) are kept as they
		// came: only the contract reads them, and a value of another type
		// is its to judge, not a failure to parse.
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails json.RawMessage `json:"incomplete_details"`
}

// OutputTokens is usage.output_tokens, 0 when there is no usage or no count.
func (r *Response) OutputTokens() int {
	if r.Usage == nil || r.Usage.OutputTokens == nil {
		return 0
	}
	return *r.Usage.OutputTokens
}

var usageMembers = strict.Members{"input_tokens": nil, "output_tokens": nil, "total_tokens": nil,
	"input_tokens_details": {"cached_tokens": nil}}

var objectMembers = strict.Members{"id": nil, "object": nil, "status": nil, "model": nil, "usage": usageMembers,
	"output": {"type": nil, "content": {"type": nil, "text": nil}, "name": nil, "arguments": nil}, "error": nil,
	"incomplete_details": {"reason": nil}}

// eventMembers are checked in each stream event.
var eventMembers = strict.Members{"type": nil, "sequence_number": nil, "response": objectMembers,
	"output_index": nil, "item_id": nil, "delta": nil, "error": nil, "arguments": nil, "text": nil,
	"item": {"type": nil, "name": nil, "arguments": nil, "content": {"type": nil, "text": nil}}}

// ParseResponse decodes a Response body.
func ParseResponse(b []byte) (*Response, error) {
	r := &Response{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's answer is not a Response")
	}
	if err := strict.Check(b, objectMembers); err != nil {
		return nil, custody.Errorf(custody.CodeResponseAmbiguous, "upstream body: ambiguous members: %s", err)
	}
	return r, nil
}

// PromptTokens is usage.input_tokens (cached tokens included), -1 when
// there is no usage.
func (r *Response) PromptTokens() int {
	if r.Usage == nil {
		return -1
	}
	return r.Usage.InputTokens
}

// Cached is usage.input_tokens_details.cached_tokens.
func (r *Response) Cached() int {
	if r.Usage == nil || r.Usage.InputTokensDetails == nil {
		return 0
	}
	return r.Usage.InputTokensDetails.CachedTokens
}

// Text is the output_text of every message item, concatenated.
func (r *Response) Text() string {
	s := ""
	for _, o := range r.Output {
		for _, c := range o.Content {
			if c.Type == "output_text" {
				s += c.Text
			}
		}
	}
	return s
}

// Failure is the success-shape check: a 200 whose body is not a Response
// (an error body), whose status is failed or not a final status, or that
// is incomplete having written nothing, is upstream_error_as_success. An
// incomplete Response with output is passed on as the upstream said: the
// client sees status incomplete.
func (r *Response) Failure() error {
	if len(r.Error) > 0 && string(r.Error) != "null" || r.Object != "response" {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream answered 200 with an error body")
	}
	return statusFailure(r.Status, r.OutputTokens() > 0 || r.Text() != "")
}

func statusFailure(status string, wrote bool) error {
	switch status {
	case StatusCompleted:
		return nil
	case StatusIncomplete:
		if wrote {
			return nil
		}
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's Response is incomplete with no output")
	case StatusFailed:
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's Response failed")
	}
	return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's Response has status %q, not a final one", status)
}
