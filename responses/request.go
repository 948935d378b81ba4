package responses

import (
	"encoding/json"
	"fmt"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/strict"
)

// Request is a Responses request as custody reads it.
type Request struct {
	Body []byte

	Model        string
	Stream       bool
	Instructions string
	// Input is the conversation: a string input is one user message.
	Input             []Item
	Tools             []Tool
	ToolChoice        json.RawMessage // "auto" | "none" | "required" | {"type":"function","name":...}
	Store             *bool
	PreviousResponse  string // previous_response_id
	MaxOutputTokens   *int
	Temperature       *float64
	TopP              *float64
	ParallelToolCalls *bool
	User              string
	Metadata          json.RawMessage
	Text              json.RawMessage // text: {format: ...}
	Reasoning         json.RawMessage
	Truncation        string
	// Include lists extra output to include; custody includes none, so
	// only an empty list translates.
	Include []string
	// MaxToolCalls bounds calls of built-in tools, which a translated
	// route never has (function tools are the client's own calls).
	MaxToolCalls *int
	// ServiceTier, PromptCacheKey and SafetyIdentifier are carried to
	// chat, which has the same members.
	ServiceTier      string
	PromptCacheKey   string
	SafetyIdentifier string
	// Extra lists the top-level members custody does not interpret:
	// passed through to a Responses upstream, refused by translation.
	Extra []string
}

// Item is one input item: a message, a function call or its output.
// Only the fields of its Type are set.
type Item struct {
	Type string `json:"type"` // message | function_call | function_call_output | ...
	// message: Content is a string (one input_text part) or parts.
	Role    string `json:"role,omitempty"`
	Content []Part `json:"content,omitempty"`
	// function_call
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// function_call_output: Output is a string (or input_text parts, joined).
	Output string `json:"output,omitempty"`
	// reasoning: Content holds its reasoning_text parts; Summary and
	// EncryptedContent are kept for the translation to refuse (it
	// writes no summary and cannot read encrypted reasoning).
	Summary          json.RawMessage `json:"summary,omitempty"`
	EncryptedContent json.RawMessage `json:"encrypted_content,omitempty"`
	// Extra lists members custody does not know.
	Extra []string `json:"-"`
}

// Part is one content part of a message item.
type Part struct {
	Type     string `json:"type"` // input_text | output_text | input_image | refusal | ...
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Refusal  string `json:"refusal,omitempty"`
}

// Tool is a tool definition; only function tools have a chat equivalent.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

var requestMembers = func() strict.Members {
	part := strict.Members{"type": nil, "text": nil, "image_url": nil}
	item := strict.Members{"type": nil, "role": nil, "content": part, "call_id": nil, "name": nil,
		"arguments": nil, "output": part, "summary": part, "encrypted_content": nil}
	return strict.Members{"model": nil, "stream": nil, "instructions": nil, "input": item,
		"tools":       {"type": nil, "name": nil, "description": nil, "parameters": nil},
		"tool_choice": {"type": nil, "name": nil}, "store": nil, "previous_response_id": nil,
		"max_output_tokens": nil, "temperature": nil, "top_p": nil, "parallel_tool_calls": nil,
		"user": nil, "metadata": nil, "text": {"format": nil, "verbosity": nil},
		"reasoning": {"effort": nil, "summary": nil, "generate_summary": nil}, "truncation": nil,
		"include": nil, "max_tool_calls": nil, "service_tier": nil, "prompt_cache_key": nil, "safety_identifier": nil}
}()

var knownMembers = map[string]bool{"model": true, "stream": true, "instructions": true, "input": true,
	"tools": true, "tool_choice": true, "store": true, "previous_response_id": true,
	"max_output_tokens": true, "temperature": true, "top_p": true, "parallel_tool_calls": true,
	"user": true, "metadata": true, "text": true, "reasoning": true, "truncation": true,
	"include": true, "max_tool_calls": true, "service_tier": true, "prompt_cache_key": true, "safety_identifier": true}

func bad(param, format string, args ...any) *custody.Error {
	e := custody.Errorf(custody.CodeInvalidRequest, format, args...)
	e.Param = param
	return e
}

// ParseRequest parses a POST /v1/responses body.
func ParseRequest(body []byte) (*Request, error) {
	top, err := strict.DecodeObject(body, requestMembers, knownMembers)
	if err != nil {
		return nil, bad("", "%s", err)
	}
	r := &Request{Body: body, Extra: top.Extra}
	fields := []struct {
		name string
		v    any
	}{{"model", &r.Model}, {"stream", &r.Stream}, {"instructions", &r.Instructions},
		{"store", &r.Store}, {"previous_response_id", &r.PreviousResponse},
		{"max_output_tokens", &r.MaxOutputTokens}, {"temperature", &r.Temperature}, {"top_p", &r.TopP},
		{"parallel_tool_calls", &r.ParallelToolCalls}, {"user", &r.User}, {"truncation", &r.Truncation},
		{"include", &r.Include}, {"max_tool_calls", &r.MaxToolCalls}, {"service_tier", &r.ServiceTier},
		{"prompt_cache_key", &r.PromptCacheKey}, {"safety_identifier", &r.SafetyIdentifier}}
	for _, f := range fields {
		if raw, ok := top.Present(f.name); ok && json.Unmarshal(raw, f.v) != nil {
			return nil, bad(f.name, "%s has the wrong type", f.name)
		}
	}
	if r.Model == "" {
		return nil, bad("model", "model is required")
	}
	if r.MaxOutputTokens != nil && *r.MaxOutputTokens < 1 {
		return nil, bad("max_output_tokens", "max_output_tokens must be positive")
	}
	r.Metadata, _ = top.Present("metadata")
	r.Text, _ = top.Present("text")
	r.Reasoning, _ = top.Present("reasoning")
	r.ToolChoice, _ = top.Present("tool_choice")
	raw, ok := top.Present("input")
	if !ok {
		return nil, bad("input", "input is required")
	}
	items, err := parseInput(raw)
	if err != nil {
		return nil, err
	}
	r.Input = items
	if raw, ok := top.Present("tools"); ok {
		if json.Unmarshal(raw, &r.Tools) != nil {
			return nil, bad("tools", "tools must be an array of tool definitions")
		}
		for i, t := range r.Tools {
			if t.Type == "function" && t.Name == "" {
				return nil, bad(fmt.Sprintf("tools[%d].name", i), "a function tool needs a name")
			}
			if t.Type == "" {
				return nil, bad(fmt.Sprintf("tools[%d].type", i), "a tool needs a type")
			}
		}
	}
	if len(r.ToolChoice) > 0 {
		if _, err := toolChoice(r.ToolChoice); err != nil {
			return nil, err
		}
	}
	return r, nil
}

var itemFields = map[string]bool{"type": true, "role": true, "content": true, "id": true, "call_id": true,
	"name": true, "arguments": true, "output": true, "status": true, "summary": true, "encrypted_content": true}

func parseInput(raw json.RawMessage) ([]Item, error) {
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, bad("input", "input must be a string or an array of items")
		}
		return []Item{{Type: "message", Role: "user", Content: []Part{{Type: "input_text", Text: s}}}}, nil
	}
	var raws []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &raws) != nil {
		return nil, bad("input", "input must be a string or an array of items")
	}
	if len(raws) == 0 {
		return nil, bad("input", "input must not be empty")
	}
	items := make([]Item, 0, len(raws))
	for i, ir := range raws {
		p := fmt.Sprintf("input[%d]", i)
		var fields map[string]json.RawMessage
		if json.Unmarshal(ir, &fields) != nil {
			return nil, bad(p, "an input item must be an object")
		}
		var it struct {
			Item
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		}
		if json.Unmarshal(ir, &it) != nil {
			return nil, bad(p, "an input item has a member of the wrong type")
		}
		item := it.Item
		item.Extra = strict.Unknown(fields, itemFields)
		if item.Type == "" && item.Role != "" {
			item.Type = "message" // an easy input message
		}
		switch item.Type {
		case "message":
			switch item.Role {
			case "user", "assistant", "system", "developer":
			default:
				return nil, bad(p+".role", "role must be user, assistant, system or developer")
			}
			parts, err := parseParts(it.Content, p+".content", item.Role)
			if err != nil {
				return nil, err
			}
			item.Content = parts
		case "function_call":
			if item.CallID == "" || item.Name == "" {
				return nil, bad(p, "a function_call item needs a call_id and a name")
			}
		case "function_call_output":
			if item.CallID == "" {
				return nil, bad(p+".call_id", "a function_call_output item needs a call_id")
			}
			out, err := outputText(it.Output, p+".output")
			if err != nil {
				return nil, err
			}
			item.Output = out
		case "reasoning":
			if len(it.Content) > 0 && string(it.Content) != "null" {
				if json.Unmarshal(it.Content, &item.Content) != nil {
					return nil, bad(p+".content", "a reasoning item's content must be an array of parts")
				}
			}
		case "":
			return nil, bad(p+".type", "an input item needs a type")
		}
		items = append(items, item)
	}
	return items, nil
}

func parseParts(raw json.RawMessage, param, role string) ([]Part, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, bad(param, "a message needs content")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, bad(param, "content must be a string or an array of parts")
		}
		typ := "input_text"
		if role == "assistant" {
			typ = "output_text"
		}
		return []Part{{Type: typ, Text: s}}, nil
	}
	var parts []Part
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return nil, bad(param, "content must be a string or an array of parts")
	}
	for i, pt := range parts {
		if pt.Type == "" {
			return nil, bad(fmt.Sprintf("%s[%d].type", param, i), "a content part needs a type")
		}
	}
	return parts, nil
}

// outputText is a function_call_output's output: a string, or text parts
// joined with "\n".
func outputText(raw json.RawMessage, param string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", bad(param, "output must be a string")
		}
		return s, nil
	}
	var parts []Part
	if json.Unmarshal(raw, &parts) != nil {
		return "", bad(param, "output must be a string or an array of parts")
	}
	s := ""
	for i, pt := range parts {
		if pt.Type != "input_text" && pt.Type != "output_text" {
			return "", bad(fmt.Sprintf("%s[%d].type", param, i), "only text parts can be translated in an output")
		}
		if i > 0 {
			s += "\n"
		}
		s += pt.Text
	}
	return s, nil
}

// toolChoice is the chat tool_choice of a Responses tool_choice.
func toolChoice(raw json.RawMessage) (any, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return nil, bad("tool_choice", "tool_choice must be auto, none, required or a function")
	}
	var o struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &o) != nil || o.Type != "function" || o.Name == "" {
		return nil, bad("tool_choice", "tool_choice must be auto, none, required or {type: function, name}")
	}
	return map[string]any{"type": "function", "function": map[string]string{"name": o.Name}}, nil
}
