package responses

import (
	"encoding/json"

	"github.com/custody-gateway/custody/internal/strict"
)

// WithModel is r's body with its model replaced, every other byte kept.
func (r *Request) WithModel(model string) []byte {
	if model == r.Model {
		return r.Body
	}
	q, _ := json.Marshal(model)
	return strict.ReplaceTop(r.Body, "model", q)
}

// CountingChat is the chat body custody counts the prompt of r on: its
// translation where it has one; else (a request for an upstream that
// speaks Responses, with what chat cannot say) the translation of its
// message, function call and output items alone, a lower bound.
func (r *Request) CountingChat() []byte {
	if b, err := r.ToChat(); err == nil {
		return b
	}
	c := *r
	c.Extra, c.Reasoning, c.Text, c.Truncation, c.PreviousResponse = nil, nil, nil, "", ""
	c.Input = nil
	for _, it := range r.Input {
		it.Extra = nil
		switch it.Type {
		case "message":
			var parts []Part
			for _, p := range it.Content {
				if p.Type == "input_text" || p.Type == "output_text" {
					parts = append(parts, p)
				}
			}
			it.Content = parts
		case "function_call", "function_call_output":
		default:
			continue
		}
		c.Input = append(c.Input, it)
	}
	c.Tools = nil
	for _, t := range r.Tools {
		if t.Type == "function" {
			c.Tools = append(c.Tools, t)
		}
	}
	b, err := c.ToChat()
	if err != nil {
		b, _ = json.Marshal(map[string]any{"model": r.Model, "messages": []any{}})
	}
	return b
}
