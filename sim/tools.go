package sim

import (
	"encoding/json"
	"slices"
	"strings"
)

// Tool calls. The toy model calls a tool when the request forces one
// (tool_choice "required" or a named function), or leaves the choice to
// the model (tool_choice absent or "auto") and the user's last message
// asks for it in so many words ("use the NAME tool", as a person asks an
// agent), and the conversation does not already end with a tool's result
// (system messages after it aside): the call is the named tool (or the
// first), its arguments an object with every property
// of the tool's schema, strings filled with the answer's words, numbers
// with its length, booleans true. Deterministic, so that a test can
// expect the arguments, and enough for a tool round trip through every
// dialect.

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// toolCall is the one call of a forced answer.
type toolCall struct {
	ID, Name, Arguments string
}

type wireToolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// wire is the call as a message's tool_calls entry (whole) or a stream's
// first delta of it (arguments to follow).
func (t *toolCall) wire(whole bool) wireToolCall {
	w := wireToolCall{ID: t.ID, Type: "function", Function: wireFunction{Name: t.Name}}
	if whole {
		w.Function.Arguments = t.Arguments
	}
	return w
}

// toolCallOf is the call the answer res makes to req, or nil.
func toolCallOf(req *chatRequest, res *result) *toolCall {
	if len(req.Tools) == 0 || len(res.tokens) == 0 || res.finish != "stop" && res.finish != "length" {
		return nil
	}
	last := lastTurn(req.Messages)
	if last != nil && last.Role == "tool" {
		return nil
	}
	name := ""
	var choice struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	var mode string
	switch {
	case json.Unmarshal(req.ToolChoice, &mode) == nil && mode == "required":
		name = req.Tools[0].Function.Name
	case json.Unmarshal(req.ToolChoice, &choice) == nil && choice.Type == "function":
		name = choice.Function.Name
	case len(req.ToolChoice) == 0 || string(req.ToolChoice) == "null" || mode == "auto":
		if name = askedTool(req.Tools, last); name == "" {
			return nil
		}
	default:
		return nil
	}
	i := slices.IndexFunc(req.Tools, func(t chatTool) bool { return t.Function.Name == name })
	if i < 0 {
		return nil
	}
	b := argumentsFor(req.Tools[i].Function.Parameters, res)
	res.finish = "tool_calls"
	return &toolCall{ID: "call_" + randomID(8), Name: name, Arguments: string(b)}
}

// argumentsFor is an object with every property of the object schema
// params: strings filled with the answer's words, numbers with its
// length, booleans true.
func argumentsFor(params json.RawMessage, res *result) []byte {
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(params, &schema)
	keys := make([]string, 0, len(schema.Properties))
	for k := range schema.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	text := strings.Fields(content(res.tokens))
	if len(text) == 0 {
		text = []string{"none"}
	}
	args := map[string]any{}
	for j, k := range keys {
		switch schema.Properties[k].Type {
		case "integer", "number":
			args[k] = len(res.tokens)
		case "boolean":
			args[k] = true
		case "array":
			args[k] = text
		case "object":
			args[k] = map[string]any{}
		default:
			args[k] = text[j%len(text)]
		}
	}
	b, _ := json.Marshal(args)
	return b
}

// lastTurn is the conversation's last message other than a system one
// (agents append system reminders after the turn they frame), or nil.
func lastTurn(msgs []chatMessage) *chatMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "system" && msgs[i].Role != "developer" {
			return &msgs[i]
		}
	}
	return nil
}

// askedTool is the tool the user's message m asks for by name ("use the
// NAME tool"), or "".
func askedTool(tools []chatTool, m *chatMessage) string {
	if m == nil || m.Role != "user" {
		return ""
	}
	text, err := messageText(m.Content)
	if err != nil {
		return ""
	}
	for _, t := range tools {
		if t.Function.Name == "" {
			continue
		}
		if ask := "se the " + t.Function.Name + " tool"; strings.Contains(text, "u"+ask) || strings.Contains(text, "U"+ask) {
			return t.Function.Name
		}
	}
	return ""
}
