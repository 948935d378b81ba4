package check

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/custody-gateway/custody/anthropic"
)

// The contract on the Messages wire: a Messages request passed through to
// a kind: anthropic provider, its answer held to what the client asked
// before it is relayed. The clauses are the chat ones (contract_clauses.go)
// read through the Messages members: tools and their input_schema (strict
// when the tool says so), tool_choice auto/any/tool/none and
// disable_parallel_tool_use, max_tokens against usage.output_tokens,
// stop_sequences against the text, and stop_reason tool_use if and only
// if the answer has tool_use blocks. The answer is one choice, index 0,
// whose finish is the stop_reason as chat names it (finishOfStop).

// MessagesContract derives the contract from a Messages request as
// anthropic.ParseRequest read it. Every tool's name is declared (an
// Anthropic-defined tool such as bash is called by its name in a tool_use
// block); only a client tool's input_schema holds its input.
func MessagesContract(r *anthropic.Request) Contract {
	c := Contract{MaxTokens: max(r.MaxTokens, 0)}
	if len(r.Tools) > 0 {
		c.Tools = make([]Tool, 0, len(r.Tools))
		for _, t := range r.Tools {
			tool := Tool{Name: t.Name, Strict: t.Strict}
			if t.Type == "" || t.Type == "custom" {
				tool.Parameters = nullIsNil(t.InputSchema)
			}
			c.Tools = append(c.Tools, tool)
		}
	}
	if tc := r.ToolChoice; tc != nil {
		switch tc.Type {
		case "none":
			c.ToolChoice = ChoiceNone
		case "any":
			// A server tool's call (web_search...) is a server_tool_use
			// block, not a tool_use: with one declared, "any" may be
			// honoured by a call the clauses do not read.
			if !typedTools(r.Tools) {
				c.ToolChoice = ChoiceRequired
			}
		case "tool":
			if !typedTool(r.Tools, tc.Name) {
				c.ToolChoice, c.Named = ChoiceNamed, tc.Name
			}
		}
		c.NoParallel = tc.DisableParallelToolUse
	}
	for _, s := range r.StopSequences {
		if s != "" {
			c.Stop = append(c.Stop, s)
		}
	}
	return c
}

// typedTools reports whether any tool is one of Anthropic's own (a type
// other than custom), some of which are called by server_tool_use blocks.
func typedTools(tools []anthropic.Tool) bool {
	for _, t := range tools {
		if t.Type != "" && t.Type != "custom" {
			return true
		}
	}
	return false
}

// typedTool reports whether the tool called name is one of Anthropic's own.
func typedTool(tools []anthropic.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return t.Type != "" && t.Type != "custom"
		}
	}
	return false
}

// finishOfStop is a stop_reason as the chat clauses read a finish_reason:
// end_turn and stop_sequence stop, tool_use calls tools, max_tokens and
// the context window end it at a length, refusal filters it; pause_turn
// (a server tool's long turn, to be continued) is left as it came, an
// unfinished answer no clause but the calls' reads.
func finishOfStop(stop string) string {
	switch stop {
	case anthropic.StopEndTurn, anthropic.StopSequence:
		return "stop"
	case anthropic.StopToolUse:
		return "tool_calls"
	case anthropic.StopMaxTokens, anthropic.StopContextLimit:
		return "length"
	case anthropic.StopRefusal:
		return "content_filter"
	}
	return stop
}

// MessagesAnswer is the answer of a complete Messages response as
// anthropic.ParseResponse read it: its text blocks joined, its tool_use
// blocks as calls (input as arguments), its stop_reason and
// usage.output_tokens. A stop_sequence or a block's name that is neither
// a string nor null makes an empty answer (no choice, no count), as a
// body the answer could not be read from.
func MessagesAnswer(r *anthropic.Response) Answer {
	a := Answer{CompletionTokens: -1}
	ch := AnswerChoice{}
	var ok bool
	if ch.StopSequence, ok = rawString(r.StopSequence); !ok {
		return a
	}
	n, calls := 0, 0
	for i := range r.Content {
		b := &r.Content[i]
		if _, ok := rawString(b.Name); !ok {
			return a
		}
		switch b.Type {
		case "text":
			n += len(b.Text)
		case "tool_use":
			calls++
		}
	}
	if r.Usage != nil && r.Usage.Output != nil {
		a.CompletionTokens = *r.Usage.Output
	}
	if r.StopReason != nil {
		ch.Finish = finishOfStop(*r.StopReason)
		ch.AtStop = *r.StopReason == anthropic.StopSequence
	}
	var text strings.Builder
	text.Grow(n)
	if calls > 0 {
		ch.Calls = make([]Call, 0, calls)
	}
	for i := range r.Content {
		switch b := &r.Content[i]; b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			name, _ := rawString(b.Name)
			ch.Calls = append(ch.Calls, Call{Name: name, Arguments: string(b.Input)})
		}
	}
	ch.Text = text.String()
	a.Choices = []AnswerChoice{ch}
	return a
}

// rawString is a JSON value kept as it came read as a string, as
// encoding/json decodes one into a string: absent or null is "", another
// string's contents the string; ok is false for any other value.
func rawString(raw json.RawMessage) (s string, ok bool) {
	if len(raw) == 0 {
		return "", true
	}
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && plainString(raw[1:len(raw)-1]) {
		return string(raw[1 : len(raw)-1]), true
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// plainString reports whether b, a JSON string's contents, is its own
// value: no escape, no control character, valid UTF-8 (encoding/json
// would replace an invalid byte).
func plainString(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c < 0x20 || c == '"' {
			return false
		}
	}
	return utf8.Valid(b)
}

// MessagesStream joins a Messages stream's events into its Answer: the
// text deltas of its text blocks (only when a clause reads the text),
// each tool_use block's name and its input_json_delta fragments in order,
// the stop_reason and the last usage.output_tokens. Blocks come one at a
// time (the stream validator holds them to that), so a delta belongs to
// the block last started, and a text delta no clause reads is not
// decoded.
type MessagesStream struct {
	c        *Contract
	keepText bool
	text     strings.Builder
	calls    []streamCall // index: the block's index
	open     string       // the type of the block last started
	finish   string
	tokens   int
	// atStop and stopSequence: stop_reason stop_sequence, and the
	// sequence it names.
	atStop       bool
	stopSequence string
}

// NewMessagesStream starts joining a Messages stream's answer for c.
func (c *Contract) NewMessagesStream() *MessagesStream {
	return &MessagesStream{c: c, keepText: len(c.Stop) > 0, tokens: -1}
}

type messagesEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type         string  `json:"type"`
		Text         string  `json:"text"`
		PartialJSON  string  `json:"partial_json"`
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *struct {
		OutputTokens *int `json:"output_tokens"`
	} `json:"usage"`
	Message *struct {
		Usage *struct {
			OutputTokens *int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// Event adds one event: typ is its type (the SSE event name, which the
// stream reader held to the data's), data its JSON.
func (s *MessagesStream) Event(typ string, data []byte) {
	switch typ {
	case "content_block_delta":
		if s.open != "tool_use" && !(s.open == "text" && s.keepText) {
			return // nothing a clause reads
		}
	case "content_block_start", "message_delta", "message_start":
	default:
		return
	}
	var e messagesEvent
	if json.Unmarshal(data, &e) != nil {
		return
	}
	switch typ {
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil && e.Message.Usage.OutputTokens != nil {
			s.tokens = *e.Message.Usage.OutputTokens
		}
	case "content_block_start":
		if b := e.ContentBlock; b != nil {
			s.open = b.Type
			switch b.Type {
			case "tool_use":
				// The start's input ({} before the deltas) counts when no
				// delta follows.
				s.calls = append(s.calls, streamCall{index: e.Index, name: b.Name, start: b.Input})
			case "text":
				if s.keepText {
					s.text.WriteString(b.Text)
				}
			}
		}
	case "content_block_delta":
		if d := e.Delta; d != nil {
			switch {
			case d.Type == "input_json_delta" && s.open == "tool_use" && len(s.calls) > 0:
				call := &s.calls[len(s.calls)-1]
				call.args = append(call.args, d.PartialJSON...)
				call.delta = true
			case d.Type == "text_delta" && s.open == "text":
				s.text.WriteString(d.Text)
			}
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != nil {
			s.finish = finishOfStop(*e.Delta.StopReason)
			s.atStop = *e.Delta.StopReason == anthropic.StopSequence
		}
		if e.Delta != nil && e.Delta.StopSequence != nil {
			s.stopSequence = *e.Delta.StopSequence
		}
		if e.Usage != nil && e.Usage.OutputTokens != nil {
			s.tokens = *e.Usage.OutputTokens // cumulative
		}
	}
}

// Answer is the stream's answer so far (after message_delta: the whole).
func (s *MessagesStream) Answer() Answer {
	ch := AnswerChoice{Finish: s.finish, Text: s.text.String(), AtStop: s.atStop, StopSequence: s.stopSequence}
	for _, c := range s.calls {
		ch.Calls = append(ch.Calls, Call{Name: c.name, Arguments: c.arguments()})
	}
	return Answer{Choices: []AnswerChoice{ch}, CompletionTokens: s.tokens}
}

// Contract is the contract the stream's answer is held to.
func (s *MessagesStream) Contract() *Contract { return s.c }

// finishPaused is a Messages pause_turn as the clauses read it.
const finishPaused = anthropic.StopPauseTurn
