package responses

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
	// ReasoningContent is an assistant message's reasoning, from the
	// reasoning items before it.
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

// chatPart is a content part; Text is a pointer so that an empty text
// part stays a text part ({"text": ""}) instead of losing its text.
type chatPart struct {
	Type     string         `json:"type"`
	Text     *string        `json:"text,omitempty"`
	ImageURL map[string]any `json:"image_url,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	} `json:"function"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatRequest struct {
	Model             string         `json:"model"`
	Messages          []chatMessage  `json:"messages"`
	MaxTokens         *int           `json:"max_tokens,omitempty"`
	Stream            bool           `json:"stream,omitempty"`
	StreamOptions     *streamOptions `json:"stream_options,omitempty"`
	Tools             []chatTool     `json:"tools,omitempty"`
	ToolChoice        any            `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool          `json:"parallel_tool_calls,omitempty"`
	Temperature       *float64       `json:"temperature,omitempty"`
	TopP              *float64       `json:"top_p,omitempty"`
	User              string         `json:"user,omitempty"`
	ResponseFormat    any            `json:"response_format,omitempty"`
	ReasoningEffort   string         `json:"reasoning_effort,omitempty"`
	Verbosity         string         `json:"verbosity,omitempty"`
	ServiceTier       string         `json:"service_tier,omitempty"`
	PromptCacheKey    string         `json:"prompt_cache_key,omitempty"`
	SafetyIdentifier  string         `json:"safety_identifier,omitempty"`
}

func untranslatable(param string) error {
	if param == "" || param[len(param)-1] == '.' {
		param += `""` // a member whose name is empty
	}
	return bad(param, "%s has no equivalent on this route's chat completions upstream; remove it or route to a provider with responses: true", param)
}

// NeedsState reports the first member of r that only a server keeping
// conversation state can honour ("" for none): custody keeps no
// conversation text, so such a request is refused on a translated route.
func (r *Request) NeedsState() string {
	if r.PreviousResponse != "" {
		return "previous_response_id"
	}
	if slices.Contains(r.Extra, "conversation") {
		return "conversation"
	}
	for i, it := range r.Input {
		if it.Type == "item_reference" {
			return fmt.Sprintf("input[%d]", i)
		}
	}
	return ""
}

// ToChat translates r, statelessly, to a chat completions request body:
// instructions become the first system message, message items chat
// messages (developer as system), function_call items an assistant
// message's tool_calls, function_call_output items tool messages,
// function tools chat tools, max_output_tokens max_tokens, text.format
// response_format. A stream asks for usage.
//
// previous_response_id (and anything else that needs state the upstream
// cannot hold) and every field without a chat equivalent are a 400
// naming it: custody neither drops part of a request nor stores
// conversation text to emulate state. metadata is not sent: it is echoed
// in the Response, where the client reads it.
func (r *Request) ToChat() ([]byte, error) {
	if p := r.NeedsState(); p != "" {
		return nil, bad(p, "%s needs conversation state that this route's chat completions upstream cannot hold, and custody never stores conversation text; send the whole conversation as input", p)
	}
	if len(r.Extra) > 0 {
		return nil, untranslatable(r.Extra[0])
	}
	if len(r.Include) > 0 {
		return nil, bad("include", "custody's translation to chat completions produces no extra output: send include: [] or leave it out, or route to a provider with responses: true")
	}
	effort, err := reasoningEffort(r.Reasoning)
	if err != nil {
		return nil, err
	}
	// truncation: auto lets the server drop the oldest input when the
	// prompt does not fit; custody refuses such a prompt instead
	// (context_length_exceeded), so every prompt it serves is whole, as
	// with disabled.
	if r.Truncation != "" && r.Truncation != "disabled" && r.Truncation != "auto" {
		return nil, bad("truncation", "truncation must be auto or disabled")
	}
	out := chatRequest{Model: r.Model, MaxTokens: r.MaxOutputTokens, Stream: r.Stream, Temperature: r.Temperature,
		TopP: r.TopP, ParallelToolCalls: r.ParallelToolCalls, User: r.User, ReasoningEffort: effort,
		ServiceTier: r.ServiceTier, PromptCacheKey: r.PromptCacheKey, SafetyIdentifier: r.SafetyIdentifier}
	if r.Stream {
		out.StreamOptions = &streamOptions{true}
	}
	if len(r.Text) > 0 {
		f, verbosity, err := responseFormat(r.Text)
		if err != nil {
			return nil, err
		}
		out.ResponseFormat, out.Verbosity = f, verbosity
	}
	if r.Instructions != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: r.Instructions})
	}
	// reasoning is the text of the reasoning items not yet placed, and
	// reasoningAt the first of them: it goes to the assistant message
	// (or call) that follows them.
	reasoning, reasoningAt := "", -1
	for i, it := range r.Input {
		p := fmt.Sprintf("input[%d]", i)
		if len(it.Extra) > 0 {
			return nil, untranslatable(p + "." + it.Extra[0])
		}
		if reasoningAt >= 0 && it.Type != "reasoning" && it.Type != "function_call" &&
			!(it.Type == "message" && it.Role == "assistant") {
			return nil, bad(fmt.Sprintf("input[%d]", reasoningAt), "input[%d]: a reasoning item goes back before the assistant message or function_call it came with", reasoningAt)
		}
		switch it.Type {
		case "reasoning":
			text, err := reasoningText(it, p)
			if err != nil {
				return nil, err
			}
			if reasoningAt < 0 {
				reasoningAt = i
			}
			reasoning += text
		case "message":
			m, err := message(it, p)
			if err != nil {
				return nil, err
			}
			m.ReasoningContent, reasoning, reasoningAt = reasoning, "", -1
			out.Messages = append(out.Messages, m)
		case "function_call":
			call := chatToolCall{ID: it.CallID, Type: "function"}
			call.Function.Name, call.Function.Arguments = it.Name, it.Arguments
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == "assistant" &&
				(reasoning == "" || out.Messages[n-1].ReasoningContent == "") {
				out.Messages[n-1].ToolCalls = append(out.Messages[n-1].ToolCalls, call)
				out.Messages[n-1].ReasoningContent += reasoning
			} else {
				out.Messages = append(out.Messages, chatMessage{Role: "assistant", ToolCalls: []chatToolCall{call},
					ReasoningContent: reasoning})
			}
			reasoning, reasoningAt = "", -1
		case "function_call_output":
			out.Messages = append(out.Messages, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: it.Output})
		default:
			return nil, untranslatable(p + ".type")
		}
	}
	if reasoningAt >= 0 {
		return nil, bad(fmt.Sprintf("input[%d]", reasoningAt), "input[%d]: a reasoning item goes back before the assistant message or function_call it came with", reasoningAt)
	}
	for i, t := range r.Tools {
		if t.Type != "function" {
			return nil, untranslatable(fmt.Sprintf("tools[%d].type", i))
		}
		var ct chatTool
		ct.Type = "function"
		ct.Function.Name, ct.Function.Description, ct.Function.Strict = t.Name, t.Description, t.Strict
		ct.Function.Parameters = t.Parameters
		out.Tools = append(out.Tools, ct)
	}
	if len(r.ToolChoice) > 0 {
		tc, err := toolChoice(r.ToolChoice)
		if err != nil {
			return nil, err
		}
		out.ToolChoice = tc
	}
	return json.Marshal(out)
}

func message(it Item, p string) (chatMessage, error) {
	role := it.Role
	if role == "developer" {
		role = "system" // chat templates know system; OpenAI treats both alike
	}
	var parts []chatPart
	for j, pt := range it.Content {
		pp := fmt.Sprintf("%s.content[%d]", p, j)
		switch pt.Type {
		case "input_text", "output_text":
			parts = append(parts, chatPart{Type: "text", Text: &pt.Text})
		case "refusal":
			parts = append(parts, chatPart{Type: "text", Text: &pt.Refusal})
		case "input_image":
			if it.Role != "user" || pt.ImageURL == "" {
				return chatMessage{}, untranslatable(pp)
			}
			img := map[string]any{"url": pt.ImageURL}
			if pt.Detail != "" {
				img["detail"] = pt.Detail
			}
			parts = append(parts, chatPart{Type: "image_url", ImageURL: img})
		default:
			return chatMessage{}, untranslatable(pp + ".type")
		}
	}
	m := chatMessage{Role: role}
	switch {
	case len(parts) == 1 && parts[0].Type == "text", role != "user":
		texts := make([]string, 0, len(parts))
		for _, pt := range parts {
			if pt.Type != "text" {
				return chatMessage{}, untranslatable(p + ".content")
			}
			texts = append(texts, *pt.Text)
		}
		m.Content = strings.Join(texts, "\n")
	default:
		m.Content = parts
	}
	return m, nil
}

// reasoningText is the text of a reasoning input item: its
// reasoning_text parts, joined. A summary or encrypted content is
// refused: custody writes no summary, so a summary is not one of its
// answers' reasoning, and it cannot read encrypted reasoning.
func reasoningText(it Item, p string) (string, error) {
	if s := string(it.Summary); s != "" && s != "null" && s != "[]" {
		return "", bad(p+".summary", "%s.summary: a chat completions upstream takes back the reasoning's text, not a summary of it: leave the summary out, or route to a provider with responses: true", p)
	}
	if s := string(it.EncryptedContent); s != "" && s != "null" && s != `""` {
		return "", bad(p+".encrypted_content", "%s.encrypted_content: custody cannot read encrypted reasoning: leave it out, or route to a provider with responses: true", p)
	}
	text := ""
	for j, pt := range it.Content {
		if pt.Type != "reasoning_text" {
			return "", untranslatable(fmt.Sprintf("%s.content[%d].type", p, j))
		}
		text += pt.Text
	}
	return text, nil
}

// reasoningEffort is the chat reasoning_effort of a Responses reasoning
// member ("" for none). A reasoning summary is refused: a chat upstream
// returns its reasoning, if any, whole, and custody writes no summary.
func reasoningEffort(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var r struct {
		Effort          *string         `json:"effort"`
		Summary         json.RawMessage `json:"summary"`
		GenerateSummary json.RawMessage `json:"generate_summary"`
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil || json.Unmarshal(raw, &r) != nil {
		return "", bad("reasoning", "reasoning must be an object")
	}
	for k := range all {
		if k != "effort" && k != "summary" && k != "generate_summary" {
			return "", untranslatable("reasoning." + k)
		}
	}
	for name, v := range map[string]json.RawMessage{"summary": r.Summary, "generate_summary": r.GenerateSummary} {
		if len(v) > 0 && string(v) != "null" {
			return "", bad("reasoning."+name, "a chat completions upstream writes no reasoning summary: leave reasoning.%s out, or route to a provider with responses: true", name)
		}
	}
	if r.Effort == nil {
		return "", nil
	}
	switch *r.Effort {
	case "none", "minimal", "low", "medium", "high", "xhigh":
		return *r.Effort, nil
	}
	return "", bad("reasoning.effort", "reasoning.effort must be none, minimal, low, medium, high or xhigh")
}

// responseFormat is the chat response_format and verbosity of a
// Responses text member.
func responseFormat(raw json.RawMessage) (any, string, error) {
	var t map[string]json.RawMessage
	if json.Unmarshal(raw, &t) != nil {
		return nil, "", bad("text", "text must be an object")
	}
	verbosity := ""
	for k, v := range t {
		switch k {
		case "format":
		case "verbosity":
			if string(v) != "null" && (json.Unmarshal(v, &verbosity) != nil ||
				verbosity != "low" && verbosity != "medium" && verbosity != "high") {
				return nil, "", bad("text.verbosity", "text.verbosity must be low, medium or high")
			}
		default:
			return nil, "", untranslatable("text." + k)
		}
	}
	f, err := textFormat(t["format"])
	return f, verbosity, err
}

// textFormat is the chat response_format of text.format.
func textFormat(f json.RawMessage) (any, error) {
	if len(f) == 0 || string(f) == "null" {
		return nil, nil
	}
	var format struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict,omitempty"`
	}
	if json.Unmarshal(f, &format) != nil {
		return nil, bad("text.format", "text.format must be an object")
	}
	switch format.Type {
	case "text":
		return nil, nil
	case "json_object":
		return map[string]string{"type": "json_object"}, nil
	case "json_schema":
		if format.Name == "" || len(format.Schema) == 0 {
			return nil, bad("text.format", "a json_schema format needs a name and a schema")
		}
		js := map[string]any{"name": format.Name, "schema": format.Schema}
		if format.Description != "" {
			js["description"] = format.Description
		}
		if format.Strict != nil {
			js["strict"] = *format.Strict
		}
		return map[string]any{"type": "json_schema", "json_schema": js}, nil
	}
	return nil, untranslatable("text.format.type")
}
