package check

import (
	"encoding/json"
	"strings"

	"github.com/custody-gateway/custody/responses"
)

// The contract on the Responses wire: a Responses request passed through
// to a provider with responses: true, its answer held to what the client
// asked before it is relayed. The clauses are the chat ones
// (contract_clauses.go) read through the Responses members: function tools
// and their parameters (strict when the tool says strict: true; an absent
// strict is not taken as the promise, as on the translated path),
// tool_choice auto/none/required/a function, parallel_tool_calls,
// max_output_tokens against usage.output_tokens, and text.format
// json_object or json_schema (strict when it says so). The answer is one
// choice, index 0: its message items' output_text joined and its
// function_call items as calls. A Response has no finish_reason: its
// finish is what its status and items say (finishOfResponse), so the
// clause "tool_calls if and only if calls" holds by construction there.

// ResponsesContract derives the contract from a Responses request as
// responses.ParseRequest read it (which refused a tool_choice it cannot
// read).
func ResponsesContract(r *responses.Request) Contract {
	c := Contract{completedAtLimit: true}
	if len(r.Tools) > 0 {
		c.Tools = make([]Tool, 0, len(r.Tools))
	}
	for _, t := range r.Tools {
		if t.Type == "function" {
			c.Tools = append(c.Tools, Tool{Name: t.Name, Parameters: nullIsNil(t.Parameters), Strict: t.Strict != nil && *t.Strict})
		}
	}
	if len(r.ToolChoice) > 0 {
		var s string
		var named struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		switch {
		case json.Unmarshal(r.ToolChoice, &s) == nil:
			switch s {
			case "none":
				c.ToolChoice = ChoiceNone
			case "required":
				// A built-in or custom tool's call is an item of its own
				// type, not a function_call: with one declared,
				// "required" may be honoured by a call the clauses do
				// not read.
				if len(c.Tools) == len(r.Tools) {
					c.ToolChoice = ChoiceRequired
				}
			}
		case json.Unmarshal(r.ToolChoice, &named) == nil && named.Type == "function" && named.Name != "":
			c.ToolChoice, c.Named = ChoiceNamed, named.Name
		}
	}
	c.NoParallel = r.ParallelToolCalls != nil && !*r.ParallelToolCalls
	if r.MaxOutputTokens != nil {
		c.MaxTokens = max(*r.MaxOutputTokens, 0)
	}
	if len(r.Text) > 0 {
		var text struct {
			Format struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"format"`
		}
		if json.Unmarshal(r.Text, &text) == nil {
			switch text.Format.Type {
			case "json_object":
				c.Format = FormatJSONObject
			case "json_schema":
				c.Format, c.FormatSchema, c.FormatStrict = FormatJSONSchema, nullIsNil(text.Format.Schema), text.Format.Strict
			}
		}
	}
	return c
}

// responseObject is what the contract reads of a Response (whose members
// responses.ParseResponse, or the stream validator, checked for
// ambiguity).
type responseObject struct {
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *struct {
		OutputTokens *int `json:"output_tokens"`
	} `json:"usage"`
	Output []responseItem `json:"output"`
}

type responseItem struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// finishOfResponse is a Response's finish as the chat clauses read a
// finish_reason: incomplete at max_output_tokens (or for a reason it does
// not give) is a length, for content_filter a filter; complete, it calls
// tools when it has function_call items and stops otherwise.
func finishOfResponse(status, reason string, calls bool) string {
	switch {
	case status == responses.StatusIncomplete && reason == "content_filter":
		return "content_filter"
	case status == responses.StatusIncomplete:
		return "length"
	case calls:
		return "tool_calls"
	}
	return "stop"
}

// answer is the Response's answer: texts, calls, finish and output tokens.
func (r *responseObject) answer() Answer {
	a := Answer{CompletionTokens: -1}
	if r.Usage != nil && r.Usage.OutputTokens != nil {
		a.CompletionTokens = *r.Usage.OutputTokens
	}
	var ch AnswerChoice
	var text strings.Builder
	for i := range r.Output {
		it := &r.Output[i]
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				if p.Type == "output_text" {
					text.WriteString(p.Text)
				}
			}
		case "function_call":
			ch.Calls = append(ch.Calls, Call{Name: it.Name, Arguments: it.Arguments})
		}
	}
	ch.Text = text.String()
	ch.Finish = finishOfResponse(r.Status, r.reason(), len(ch.Calls) > 0)
	a.Choices = []AnswerChoice{ch}
	return a
}

func (r *responseObject) reason() string {
	if r.IncompleteDetails == nil {
		return ""
	}
	return r.IncompleteDetails.Reason
}

// ResponsesAnswer is the answer of a complete Response as
// responses.ParseResponse read it. A function_call's name or arguments,
// or incomplete_details' reason, that is not a string (nor null), or
// incomplete_details that is not an object (nor null), makes an empty
// answer (no choice, no count), as a body the answer could not be read
// from.
func ResponsesAnswer(r *responses.Response) Answer {
	o := responseObject{Status: r.Status, Output: make([]responseItem, len(r.Output))}
	if raw := r.IncompleteDetails; len(raw) > 0 && string(raw) != "null" {
		o.IncompleteDetails = new(struct {
			Reason string `json:"reason"`
		})
		if json.Unmarshal(raw, o.IncompleteDetails) != nil {
			return Answer{CompletionTokens: -1}
		}
	}
	if r.Usage != nil {
		o.Usage = &struct {
			OutputTokens *int `json:"output_tokens"`
		}{r.Usage.OutputTokens}
	}
	for i := range r.Output {
		it, out := &r.Output[i], &o.Output[i]
		var ok1, ok2 bool
		out.Name, ok1 = rawString(it.Name)
		out.Arguments, ok2 = rawString(it.Arguments)
		if !ok1 || !ok2 {
			return Answer{CompletionTokens: -1}
		}
		out.Type, out.Content = it.Type, it.Content
	}
	return o.answer()
}

// ResponsesStream joins a Responses stream's events into its Answer: each
// function_call item's name (output_item.added) and arguments (the
// function_call_arguments deltas, or the whole of .done or
// output_item.done), the output_text deltas (only when a format clause
// reads the text), and from the terminal event its status and usage. A
// stream whose events carried no item is answered by its terminal
// Response's output.
type ResponsesStream struct {
	c        *Contract
	keepText bool
	text     strings.Builder
	items    []streamItem // by output_index
	status   string
	reason   string
	tokens   int
	terminal *responseObject
}

type streamItem struct {
	typ, name string
	args      []byte
	whole     bool // args are the item's done arguments
}

// NewResponsesStream starts joining a Responses stream's answer for c.
func (c *Contract) NewResponsesStream() *ResponsesStream {
	return &ResponsesStream{c: c, keepText: c.Format != FormatText, tokens: -1}
}

type responsesEvent struct {
	OutputIndex int             `json:"output_index"`
	Delta       string          `json:"delta"`
	Arguments   *string         `json:"arguments"`
	Item        *responseItem   `json:"item"`
	Response    *responseObject `json:"response"`
}

// Event adds one event: typ is its type, data its JSON.
func (s *ResponsesStream) Event(typ string, data []byte) {
	switch typ {
	case "response.output_text.delta":
		if !s.keepText {
			return
		}
	case "response.output_item.added", "response.output_item.done", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.completed", "response.incomplete":
	default:
		return
	}
	var e responsesEvent
	if json.Unmarshal(data, &e) != nil {
		return
	}
	switch typ {
	case "response.output_text.delta":
		s.text.WriteString(e.Delta)
	case "response.output_item.added", "response.output_item.done":
		if e.Item == nil {
			return
		}
		it := s.item(e.OutputIndex)
		it.typ = e.Item.Type
		if e.Item.Name != "" {
			it.name = e.Item.Name
		}
		if typ == "response.output_item.done" && e.Item.Type == "function_call" {
			it.args, it.whole = append(it.args[:0], e.Item.Arguments...), true
		}
	case "response.function_call_arguments.delta":
		if it := s.item(e.OutputIndex); !it.whole {
			it.args = append(it.args, e.Delta...)
		}
	case "response.function_call_arguments.done":
		if e.Arguments != nil {
			it := s.item(e.OutputIndex)
			it.args, it.whole = append(it.args[:0], *e.Arguments...), true
		}
	default: // the terminal event
		if r := e.Response; r != nil {
			s.status, s.reason = r.Status, r.reason()
			if r.Usage != nil && r.Usage.OutputTokens != nil {
				s.tokens = *r.Usage.OutputTokens
			}
			if len(s.items) == 0 && len(r.Output) > 0 {
				s.terminal = r
			}
		}
	}
}

// item is the item at output index i, added (with those before it) if new.
func (s *ResponsesStream) item(i int) *streamItem {
	if i < 0 {
		i = 0
	}
	for len(s.items) <= i {
		s.items = append(s.items, streamItem{})
	}
	return &s.items[i]
}

// Answer is the stream's answer so far (after the terminal event: the
// whole).
func (s *ResponsesStream) Answer() Answer {
	if s.terminal != nil {
		a := s.terminal.answer()
		a.CompletionTokens = s.tokens
		return a
	}
	var ch AnswerChoice
	for _, it := range s.items {
		if it.typ == "function_call" {
			ch.Calls = append(ch.Calls, Call{Name: it.name, Arguments: string(it.args)})
		}
	}
	ch.Text = s.text.String()
	ch.Finish = finishOfResponse(s.status, s.reason, len(ch.Calls) > 0)
	return Answer{Choices: []AnswerChoice{ch}, CompletionTokens: s.tokens}
}

// Contract is the contract the stream's answer is held to.
func (s *ResponsesStream) Contract() *Contract { return s.c }
