package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/strict"
)

// Request is a Messages request as custody reads it. Body is the client's
// exact bytes; the typed fields are decoded from it.
type Request struct {
	Body []byte

	Model         string
	Stream        bool
	MaxTokens     int
	System        []Block // a string system prompt is one text block
	Messages      []Message
	Tools         []Tool
	ToolChoice    *ToolChoice
	StopSequences []string
	Temperature   *float64
	TopP          *float64
	TopK          *int
	Metadata      *Metadata
	// Thinking is the raw thinking member (extended thinking), kept so
	// that translation can refuse what it cannot carry.
	Thinking json.RawMessage
	// OutputConfig, ContextManagement and Thread are raw, for the
	// translation to carry, prove a no-op or refuse (ToChat).
	OutputConfig      json.RawMessage
	ContextManagement json.RawMessage
	Thread            json.RawMessage
	// ServiceTier is carried to chat, which has the same member.
	ServiceTier string
	// Extra lists the top-level members custody does not interpret
	// (container, mcp_servers...): passed through to a Messages upstream,
	// refused by translation.
	Extra []string
}

// Message is one turn of the conversation.
type Message struct {
	Role    string  // user | assistant | system (a mid-conversation system message: text blocks only)
	Content []Block // a string content is one text block
}

// Block is one content block. Only the fields of its Type are set.
type Block struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// image
	Source *ImageSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// thinking: the model's reasoning of an earlier turn; Signature is
	// Anthropic's seal over it, which only Anthropic can check.
	Thinking  string  `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
	// tool_result: Content is a string (one text block) or blocks.
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   []Block `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
	// CacheControl is a prompt-caching hint; it changes no output.
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	// Extra lists members of the block custody does not know (citations,
	// a redacted_thinking block's data...).
	Extra []string `json:"-"`
}

// ImageSource is an image block's source.
type ImageSource struct {
	Type      string `json:"type"` // base64 | url
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Tool is a client tool definition; Type is set for Anthropic's own
// server tools (web_search_..., bash_...), which only Anthropic runs.
type Tool struct {
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// DeferLoading keeps the tool out of the model's context until a
	// tool search finds it.
	DeferLoading bool `json:"defer_loading,omitempty"`
	// Strict asks for inputs that follow input_schema exactly
	// (structured outputs): the contract check holds a passed-through
	// answer's tool_use to it as the provider's promise.
	Strict bool `json:"strict,omitempty"`
}

// ToolChoice is auto | any | tool (with Name) | none.
type ToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// Metadata is the request's metadata; user_id is its only member.
type Metadata struct {
	UserID string `json:"user_id,omitempty"`
}

// requestMembers are the members custody, its translation and its prompt
// count read.
var requestMembers = func() strict.Members {
	var block strict.Members
	block = strict.Members{"type": nil, "text": nil, "source": nil, "id": nil, "name": nil, "input": nil,
		"tool_use_id": nil, "is_error": nil, "thinking": nil, "signature": nil}
	block["content"] = strict.Members{"type": nil, "text": nil, "source": nil}
	return strict.Members{
		"model": nil, "stream": nil, "max_tokens": nil, "system": block,
		"messages":       {"role": nil, "content": block},
		"tools":          {"type": nil, "name": nil, "description": nil, "input_schema": nil, "defer_loading": nil, "strict": nil},
		"tool_choice":    {"type": nil, "name": nil, "disable_parallel_tool_use": nil},
		"stop_sequences": nil, "temperature": nil, "top_p": nil, "top_k": nil, "metadata": {"user_id": nil},
		"thinking": {"type": nil, "budget_tokens": nil, "display": nil}, "output_config": {"effort": nil},
		"context_management": {"edits": {"type": nil, "trigger": nil, "keep": nil}}, "service_tier": nil,
		"thread": {"type": nil, "previous_message_id": nil},
	}
}()

// knownMembers are the top-level members this package interprets.
var knownMembers = map[string]bool{"model": true, "stream": true, "max_tokens": true, "system": true,
	"messages": true, "tools": true, "tool_choice": true, "stop_sequences": true, "temperature": true,
	"top_p": true, "top_k": true, "metadata": true, "thinking": true, "output_config": true,
	"context_management": true, "service_tier": true, "thread": true}

// bad is a 400 invalid_request naming param.
func bad(param, format string, args ...any) *custody.Error {
	e := custody.Errorf(custody.CodeInvalidRequest, format, args...)
	e.Param = param
	return e
}

// ParseRequest parses a POST /v1/messages body.
func ParseRequest(body []byte) (*Request, error) {
	r, err := parse(body)
	if err != nil {
		return nil, err
	}
	if r.MaxTokens < 1 {
		return nil, bad("max_tokens", "max_tokens is required and must be a positive integer")
	}
	return r, nil
}

// ParseCountTokens parses a POST /v1/messages/count_tokens body: a
// Messages request without max_tokens or stream.
func ParseCountTokens(body []byte) (*Request, error) {
	r, err := parse(body)
	if err != nil {
		return nil, err
	}
	if r.Stream {
		return nil, bad("stream", "count_tokens does not stream")
	}
	return r, nil
}

func parse(body []byte) (*Request, error) {
	top, err := strict.DecodeObject(body, requestMembers, knownMembers)
	if err != nil {
		return nil, bad("", "%s", err)
	}
	r := &Request{Body: body, Extra: top.Extra}
	if err := decodeField(top, "model", &r.Model); err != nil {
		return nil, err
	}
	if r.Model == "" {
		return nil, bad("model", "model is required")
	}
	if err := decodeField(top, "stream", &r.Stream); err != nil {
		return nil, err
	}
	if err := decodeField(top, "max_tokens", &r.MaxTokens); err != nil {
		return nil, err
	}
	if raw, ok := top.Present("system"); ok {
		bs, err := parseContent(raw, "system")
		if err != nil {
			return nil, err
		}
		for i, b := range bs {
			if b.Type != "text" {
				return nil, bad(fmt.Sprintf("system[%d].type", i), "system blocks must be text blocks")
			}
		}
		r.System = bs
	}
	raw, ok := top.Present("messages")
	if !ok {
		return nil, bad("messages", "messages is required")
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &msgs) != nil {
		return nil, bad("messages", "messages must be an array of {role, content}")
	}
	if len(msgs) == 0 {
		return nil, bad("messages", "messages must not be empty")
	}
	for i, m := range msgs {
		p := fmt.Sprintf("messages[%d]", i)
		if m.Role != "user" && m.Role != "assistant" && m.Role != "system" {
			return nil, bad(p+".role", "role must be user, assistant or system")
		}
		bs, err := parseContent(m.Content, p+".content")
		if err != nil {
			return nil, err
		}
		for j, b := range bs {
			if m.Role == "system" && b.Type != "text" {
				return nil, bad(fmt.Sprintf("%s.content[%d].type", p, j), "a system message holds text blocks only")
			}
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: bs})
	}
	if raw, ok := top.Present("tools"); ok {
		if json.Unmarshal(raw, &r.Tools) != nil {
			return nil, bad("tools", "tools must be an array of tool definitions")
		}
		for i, t := range r.Tools {
			if t.Name == "" {
				return nil, bad(fmt.Sprintf("tools[%d].name", i), "a tool needs a name")
			}
		}
	}
	if raw, ok := top.Present("tool_choice"); ok {
		r.ToolChoice = &ToolChoice{}
		if json.Unmarshal(raw, r.ToolChoice) != nil {
			return nil, bad("tool_choice", "tool_choice must be an object")
		}
		switch r.ToolChoice.Type {
		case "auto", "any", "none":
		case "tool":
			if r.ToolChoice.Name == "" {
				return nil, bad("tool_choice.name", "tool_choice of type tool needs a name")
			}
		default:
			return nil, bad("tool_choice.type", "tool_choice.type must be auto, any, tool or none")
		}
	}
	if err := decodeField(top, "stop_sequences", &r.StopSequences); err != nil {
		return nil, err
	}
	if raw, ok := top.Present("temperature"); ok {
		r.Temperature = new(float64)
		if json.Unmarshal(raw, r.Temperature) != nil {
			return nil, bad("temperature", "temperature must be a number")
		}
	}
	if raw, ok := top.Present("top_p"); ok {
		r.TopP = new(float64)
		if json.Unmarshal(raw, r.TopP) != nil {
			return nil, bad("top_p", "top_p must be a number")
		}
	}
	if raw, ok := top.Present("top_k"); ok {
		r.TopK = new(int)
		if json.Unmarshal(raw, r.TopK) != nil {
			return nil, bad("top_k", "top_k must be an integer")
		}
	}
	if raw, ok := top.Present("metadata"); ok {
		r.Metadata = &Metadata{}
		if json.Unmarshal(raw, r.Metadata) != nil {
			return nil, bad("metadata", "metadata must be an object")
		}
	}
	if raw, ok := top.Present("thinking"); ok {
		r.Thinking = raw
	}
	r.OutputConfig, _ = top.Present("output_config")
	r.ContextManagement, _ = top.Present("context_management")
	r.Thread, _ = top.Present("thread")
	if err := decodeField(top, "service_tier", &r.ServiceTier); err != nil {
		return nil, err
	}
	return r, nil
}

func decodeField(top strict.Object, name string, v any) error {
	raw, ok := top.Present(name)
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return bad(name, "%s has the wrong type", name)
	}
	return nil
}

// blockFields are the members of a block this package knows.
var blockFields = map[string]bool{"type": true, "text": true, "source": true, "id": true, "name": true,
	"input": true, "tool_use_id": true, "content": true, "is_error": true, "cache_control": true,
	"thinking": true, "signature": true}

// parseContent parses a content: a string (one text block) or an array of
// blocks.
func parseContent(raw json.RawMessage, param string) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, bad(param, "content is required")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, bad(param, "content must be a string or an array of blocks")
		}
		return []Block{{Type: "text", Text: s}}, nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, bad(param, "content must be a string or an array of blocks")
	}
	out := make([]Block, 0, len(items))
	for i, item := range items {
		p := fmt.Sprintf("%s[%d]", param, i)
		var fields map[string]json.RawMessage
		if json.Unmarshal(item, &fields) != nil {
			return nil, bad(p, "a content block must be an object")
		}
		var b struct {
			Block
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(item, &b) != nil {
			return nil, bad(p, "a content block has a member of the wrong type")
		}
		blk := b.Block
		blk.Extra = strict.Unknown(fields, blockFields)
		switch blk.Type {
		case "text":
			if _, ok := fields["text"]; !ok {
				return nil, bad(p+".text", "a text block needs text")
			}
		case "image":
			if blk.Source == nil {
				return nil, bad(p+".source", "an image block needs a source")
			}
		case "tool_use":
			if blk.ID == "" || blk.Name == "" {
				return nil, bad(p, "a tool_use block needs an id and a name")
			}
			if len(blk.Input) == 0 || blk.Input[0] != '{' {
				return nil, bad(p+".input", "a tool_use block's input must be an object")
			}
		case "tool_result":
			if blk.ToolUseID == "" {
				return nil, bad(p+".tool_use_id", "a tool_result block needs a tool_use_id")
			}
			if len(b.Content) > 0 && string(b.Content) != "null" {
				inner, err := parseContent(b.Content, p+".content")
				if err != nil {
					return nil, err
				}
				blk.Content = inner
			}
		case "thinking":
			if _, ok := fields["thinking"]; !ok {
				return nil, bad(p+".thinking", "a thinking block needs thinking")
			}
		case "":
			return nil, bad(p+".type", "a content block needs a type")
		default:
			// redacted_thinking, document, search_result...:
			// kept for pass-through, refused by translation.
		}
		out = append(out, blk)
	}
	return out, nil
}
