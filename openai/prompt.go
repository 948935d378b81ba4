package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Prompt is the text of a request that counts towards prompt tokens.
type Prompt struct {
	// Messages of a chat request.
	Messages []Message
	// Texts of a completions prompt or an embeddings input.
	Texts []string
	// PreTokenized is the number of tokens given as token-id arrays.
	PreTokenized int
	// Tools is the JSON of a chat request's tool definitions, ToolCount
	// how many there are.
	Tools     string
	ToolCount int
	// Media counts image and audio content parts.
	Media int
}

// Message is one chat message reduced to what is counted.
type Message struct {
	Role, Name string
	// Content is the message's text: a string, or its text parts joined
	// with "\n" as engines join them.
	Content string
	// ToolCalls holds the names and arguments of the message's tool
	// calls, Calls how many there are.
	ToolCalls string
	Calls     int
}

// Parts is the number of messages or prompts: the n of the slack rule.
func (p *Prompt) Parts() int {
	if len(p.Messages) > 0 {
		return len(p.Messages)
	}
	return max(len(p.Texts), 1)
}

// Len is the number of bytes of text in the prompt.
func (p *Prompt) Len() int {
	n := 0
	for _, m := range p.Messages {
		n += len(m.Content) + len(m.Role) + len(m.Name)
	}
	for _, t := range p.Texts {
		n += len(t)
	}
	return n
}

// ParsePrompt decodes the prompt of a request to endpoint. Unknown fields
// are skipped; a prompt field of the wrong type is an ErrBadRequest.
func ParsePrompt(endpoint string, body []byte) (*Prompt, error) {
	p := &Prompt{}
	switch endpoint {
	case EndpointChat:
		var req struct {
			Messages []struct {
				Role      string  `json:"role"`
				Name      string  `json:"name"`
				Content   content `json:"content"`
				ToolCalls []struct {
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"messages"`
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, badf("messages: %s", typeError(err))
		}
		if len(req.Messages) == 0 {
			return nil, badf("messages must be a non-empty array")
		}
		p.Messages = make([]Message, len(req.Messages))
		for i, m := range req.Messages {
			c := m.Content
			if c.err != nil {
				return nil, badf("messages[%d].content: %s", i, c.err)
			}
			p.Media += c.media
			var calls strings.Builder
			for _, tc := range m.ToolCalls {
				calls.WriteString(tc.Function.Name)
				calls.WriteString(tc.Function.Arguments)
			}
			p.Messages[i] = Message{Role: m.Role, Name: m.Name, Content: c.text,
				ToolCalls: calls.String(), Calls: len(m.ToolCalls)}
		}
		if len(req.Tools) > 0 && string(req.Tools) != "null" {
			var tools []json.RawMessage
			if err := json.Unmarshal(req.Tools, &tools); err != nil {
				return nil, badf("tools must be an array")
			}
			p.Tools, p.ToolCount = string(req.Tools), len(tools)
		}
	case EndpointCompletions, EndpointEmbeddings:
		field := "prompt"
		if endpoint == EndpointEmbeddings {
			field = "input"
		}
		var req map[string]json.RawMessage
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, badf("%s", typeError(err))
		}
		raw, ok := req[field]
		if !ok {
			return nil, badf("%s is required", field)
		}
		if err := p.addTexts(raw); err != nil {
			return nil, badf("%s: %s", field, err)
		}
	}
	return p, nil
}

// addTexts accepts a string, an array of strings, an array of token ids,
// or an array of token-id arrays.
func (p *Prompt) addTexts(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		p.Texts = append(p.Texts, s)
		return nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		p.Texts = append(p.Texts, ss...)
		return nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		p.PreTokenized += len(ids)
		return nil
	}
	var idss [][]int64
	if json.Unmarshal(raw, &idss) == nil {
		for _, ids := range idss {
			p.PreTokenized += len(ids)
		}
		return nil
	}
	return errString("must be a string, an array of strings or of token ids")
}

type errString string

func (e errString) Error() string { return string(e) }

// content decodes a message's content where it stands in the body: a
// json.RawMessage would copy it first, and a prompt's content can be
// tens of megabytes.
type content struct {
	text  string
	media int
	err   error
}

func (c *content) UnmarshalJSON(raw []byte) error {
	c.text, c.media, c.err = contentText(raw)
	return nil
}

// contentText returns the text of a message content (a string, null, or
// an array of parts whose text parts are joined with "\n", as llama.cpp
// and vLLM join them) and how many of its parts are media.
func contentText(raw json.RawMessage) (string, int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	if raw[0] == '"' {
		// The decoder hands over a valid string token: without escapes
		// it is its own text (no second validation and decode of what
		// can be a prompt of tens of megabytes).
		if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return string(inner), 0, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", 0, errString("bad string")
		}
		return s, 0, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", 0, errString("must be a string or an array of content parts")
	}
	var texts []string
	media := 0
	for _, pt := range parts {
		switch {
		case pt.Text != nil:
			texts = append(texts, *pt.Text)
		case pt.Type != "":
			media++
		}
	}
	return strings.Join(texts, "\n"), media, nil
}

// typeError turns a json decoding error into a message that names the
// field but never quotes the body.
func typeError(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return "field " + te.Field + " must be " + te.Type.String()
	}
	return "malformed"
}
