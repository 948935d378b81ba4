package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Chat message and tool shapes, as the translation writes them.
type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // string, []chatPart or nil
	// ReasoningContent is an assistant turn's thinking, as the engines
	// that return reasoning_content take it back.
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

// chatPart is a content part; Text is a pointer so that an empty text
// block stays a text part ({"text": ""}): engines fail on a text part
// without its text.
type chatPart struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string           `json:"type"`
	Function chatToolFunction `json:"function"`
}

type chatToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	MaxTokens     int           `json:"max_tokens,omitempty"`
	Stream        bool          `json:"stream,omitempty"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	Tools             []chatTool `json:"tools,omitempty"`
	ToolChoice        any        `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool      `json:"parallel_tool_calls,omitempty"`
	Stop              []string   `json:"stop,omitempty"`
	Temperature       *float64   `json:"temperature,omitempty"`
	TopP              *float64   `json:"top_p,omitempty"`
	TopK              *int       `json:"top_k,omitempty"`
	User              string     `json:"user,omitempty"`
	ServiceTier       string     `json:"service_tier,omitempty"`
	ReasoningEffort   string     `json:"reasoning_effort,omitempty"`
	// ChatTemplateKwargs carries thinking as enable_thinking, the
	// switch reasoning models' chat templates read.
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
}

// ToChat translates r to an OpenAI chat completions request body with
// the same meaning: system blocks become a system message, tool_use
// blocks an assistant message's tool_calls (input as JSON arguments),
// tool_result blocks tool messages (placed before the rest of their user
// turn, as chat wants them right after the calls), tools function tools,
// tool_choice its chat equivalent, stop_sequences stop, metadata.user_id
// user. A stream asks for usage (stream_options.include_usage).
//
// Anything without a chat equivalent is a 400 invalid_request naming it
// as param: custody never drops part of a request silently. cache_control
// is the one exception, a caching hint that changes no output: chat
// upstreams cache prefixes on their own.
func (r *Request) ToChat() ([]byte, error) {
	if len(r.Extra) > 0 {
		return nil, untranslatable(r.Extra[0])
	}
	ctl, err := r.translateControls()
	if err != nil {
		return nil, err
	}
	out := chatRequest{Model: r.Model, MaxTokens: r.MaxTokens, Stream: r.Stream, Stop: r.StopSequences,
		Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, ServiceTier: r.ServiceTier, ReasoningEffort: ctl.effort}
	if ctl.enableThinking != nil {
		out.ChatTemplateKwargs = map[string]any{"enable_thinking": *ctl.enableThinking}
	}
	if r.Stream {
		out.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	if r.Metadata != nil {
		out.User = r.Metadata.UserID
	}
	if len(r.System) > 0 {
		texts := make([]string, len(r.System))
		for i, b := range r.System {
			if len(b.Extra) > 0 {
				return nil, untranslatable(fmt.Sprintf("system[%d].%s", i, b.Extra[0]))
			}
			texts[i] = b.Text
		}
		// One string, joined with nothing between the blocks as
		// llama.cpp's own /v1/messages joins them (its count_tokens is
		// the reference count_tokens is checked against).
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: strings.Join(texts, "")})
	}
	for i, m := range r.Messages {
		if m.Role == "assistant" && ctl.clearThinking(i) {
			m = withoutThinking(m)
		}
		msgs, err := translateMessage(m, fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, msgs...)
	}
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "custom" {
			return nil, untranslatable(fmt.Sprintf("tools[%d].type", i))
		}
		if t.DeferLoading {
			// Not in the model's context until a tool search loads it:
			// the chat model does not see it either.
			continue
		}
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, chatTool{Type: "function",
			Function: chatToolFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if tc := r.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto":
			out.ToolChoice = "auto"
		case "any":
			out.ToolChoice = "required"
		case "none":
			out.ToolChoice = "none"
		case "tool":
			out.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
		}
		if tc.DisableParallelToolUse {
			f := false
			out.ParallelToolCalls = &f
		}
	}
	return json.Marshal(out)
}

func untranslatable(param string) error {
	if param == "" || param[len(param)-1] == '.' {
		param += `""` // a member whose name is empty
	}
	return bad(param, "%s has no equivalent on this route's chat completions upstream; remove it or route to a kind: anthropic provider", param)
}

// translateMessage turns one Messages turn into chat messages: an
// assistant turn into one message (text and tool_calls); a user turn into
// one tool message per tool_result, then one user message with the rest.
func translateMessage(m Message, param string) ([]chatMessage, error) {
	if m.Role == "system" {
		// A mid-conversation system message stays one, where it is: the
		// engine's template renders it there or refuses it.
		texts := make([]string, len(m.Content))
		for j, b := range m.Content {
			if len(b.Extra) > 0 {
				return nil, untranslatable(fmt.Sprintf("%s.content[%d].%s", param, j, b.Extra[0]))
			}
			texts[j] = b.Text
		}
		return []chatMessage{{Role: "system", Content: strings.Join(texts, "\n")}}, nil
	}
	var parts []chatPart
	var calls []chatToolCall
	var tools []chatMessage
	var thinking []string
	for j, b := range m.Content {
		p := fmt.Sprintf("%s.content[%d]", param, j)
		if len(b.Extra) > 0 {
			return nil, untranslatable(p + "." + b.Extra[0])
		}
		switch b.Type {
		case "text":
			parts = append(parts, chatPart{Type: "text", Text: &b.Text})
		case "image":
			if m.Role != "user" {
				return nil, untranslatable(p)
			}
			url, err := imageURL(b.Source, p)
			if err != nil {
				return nil, err
			}
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: url}})
		case "thinking":
			// The model's reasoning of an earlier turn goes back as the
			// engine returned it; the signature, which only Anthropic can
			// check, stays behind.
			if m.Role != "assistant" {
				return nil, bad(p, "%s: thinking blocks belong to assistant turns", p)
			}
			thinking = append(thinking, b.Thinking)
		case "tool_use":
			if m.Role != "assistant" {
				return nil, bad(p, "tool_use blocks belong to assistant turns")
			}
			calls = append(calls, chatToolCall{ID: b.ID, Type: "function",
				Function: chatFunction{Name: b.Name, Arguments: string(compact(b.Input))}})
		case "tool_result":
			if m.Role != "user" {
				return nil, bad(p, "tool_result blocks belong to user turns")
			}
			var texts []string
			if b.IsError {
				// Chat has no error flag on a tool message: the flag is
				// said in its text, where the model reads it.
				texts = append(texts, "Error:")
			}
			for k, c := range b.Content {
				if c.Type != "text" || len(c.Extra) > 0 {
					return nil, untranslatable(fmt.Sprintf("%s.content[%d]", p, k))
				}
				texts = append(texts, c.Text)
			}
			tools = append(tools, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: strings.Join(texts, "\n")})
		default:
			return nil, untranslatable(p + ".type")
		}
	}
	out := tools
	switch {
	case m.Role == "assistant":
		msg := chatMessage{Role: "assistant", ToolCalls: calls, Content: textContent(parts),
			ReasoningContent: strings.Join(thinking, "")}
		out = append(out, msg)
	case len(parts) > 0 || len(tools) == 0:
		out = append(out, chatMessage{Role: "user", Content: userContent(parts)})
	}
	return out, nil
}

// withoutThinking is m without its thinking blocks.
func withoutThinking(m Message) Message {
	out := Message{Role: m.Role, Content: make([]Block, 0, len(m.Content))}
	for _, b := range m.Content {
		if b.Type != "thinking" {
			out.Content = append(out.Content, b)
		}
	}
	return out
}

// textContent is an assistant's text: its parts joined, or null when it
// has none (a turn of tool calls only).
func textContent(parts []chatPart) any {
	if len(parts) == 0 {
		return nil
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = *p.Text
	}
	return strings.Join(texts, "\n")
}

// userContent is a string when the turn is one text block (what every
// chat template renders the same way), else the parts.
func userContent(parts []chatPart) any {
	if len(parts) == 1 && parts[0].Type == "text" {
		return *parts[0].Text
	}
	if len(parts) == 0 {
		return ""
	}
	return parts
}

func imageURL(s *ImageSource, param string) (string, error) {
	switch s.Type {
	case "base64":
		if s.MediaType == "" || s.Data == "" {
			return "", bad(param+".source", "a base64 image needs media_type and data")
		}
		return "data:" + s.MediaType + ";base64," + s.Data, nil
	case "url":
		if s.URL == "" {
			return "", bad(param+".source.url", "a url image needs a url")
		}
		return s.URL, nil
	}
	return "", untranslatable(param + ".source.type")
}

func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
