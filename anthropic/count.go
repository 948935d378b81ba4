package anthropic

import (
	"encoding/json"

	"github.com/custody-gateway/custody/internal/strict"
)

// CountingChat is the chat body custody counts the prompt of r on: r's
// translation (ToChat) where it has one; else the translation of what
// can be translated (text, images, tool calls and results, function
// tools), for a request that goes to a Messages upstream as it is and
// carries what chat cannot say (thinking blocks, server tools). Such a
// count is a lower bound of the prompt.
func (r *Request) CountingChat() []byte {
	if b, err := r.ToChat(); err == nil {
		return b
	}
	c := *r
	c.Extra, c.Thinking, c.OutputConfig, c.ContextManagement, c.Thread = nil, nil, nil, nil, nil
	c.System = textBlocks(r.System)
	c.Tools = nil
	for _, t := range r.Tools {
		if t.Type == "" || t.Type == "custom" {
			c.Tools = append(c.Tools, t)
		}
	}
	c.Messages = make([]Message, 0, len(r.Messages))
	for _, m := range r.Messages {
		var blocks []Block
		for _, b := range m.Content {
			b.Extra, b.IsError = nil, false
			switch b.Type {
			case "text", "tool_use":
			case "image":
				if b.Source == nil || (b.Source.Type != "base64" && b.Source.Type != "url") || m.Role != "user" {
					continue
				}
			case "tool_result":
				b.Content = textBlocks(b.Content)
			default:
				continue
			}
			blocks = append(blocks, b)
		}
		c.Messages = append(c.Messages, Message{Role: m.Role, Content: blocks})
	}
	b, err := c.ToChat()
	if err != nil {
		// Only malformed images and tool roles are left to refuse: count
		// the text alone.
		b, _ = json.Marshal(map[string]any{"model": r.Model, "messages": []any{}})
	}
	return b
}

func textBlocks(bs []Block) []Block {
	var out []Block
	for _, b := range bs {
		if b.Type == "text" {
			b.Extra = nil
			out = append(out, b)
		}
	}
	return out
}

// WithModel is r's body with its model replaced, every other byte kept.
func (r *Request) WithModel(model string) []byte {
	if model == r.Model {
		return r.Body
	}
	q, _ := json.Marshal(model)
	return strict.ReplaceTop(r.Body, "model", q)
}
