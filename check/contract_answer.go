package check

import (
	"encoding/json"
	"slices"

	"github.com/custody-gateway/custody/openai"
)

// Answer is what the contract holds to the request: a chat completion,
// or a stream's chunks joined.
type Answer struct {
	Choices []AnswerChoice
	// CompletionTokens is usage.completion_tokens; -1 when not reported.
	CompletionTokens int
}

// AnswerChoice is one choice of an answer.
type AnswerChoice struct {
	Index  int
	Finish string
	Text   string
	Calls  []Call
	// Logprobs: the choice carried logprobs (in a stream: any chunk did).
	Logprobs bool
	// AtStop: the answer says it stopped at a stop sequence of the
	// request (Messages' stop_reason stop_sequence), StopSequence the one
	// it names.
	AtStop       bool
	StopSequence string
}

// Call is one tool call, its arguments joined from a stream's fragments.
type Call struct {
	Name, Arguments string
}

// PlainAnswer is the answer of a complete chat completion. body is read
// again only when the contract asks for logprobs, which the response
// parse does not keep.
func PlainAnswer(c *Contract, r *openai.Response, body []byte) Answer {
	a := Answer{CompletionTokens: -1, Choices: make([]AnswerChoice, 0, len(r.Choices))}
	if r.Usage != nil {
		a.CompletionTokens = r.Usage.CompletionTokens
	}
	for i := range r.Choices {
		ch := &r.Choices[i]
		ac := AnswerChoice{Index: ch.Index, Finish: ch.FinishReason, Text: ch.Message.Content}
		for _, tc := range ch.Message.ToolCalls {
			ac.Calls = append(ac.Calls, Call{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		a.Choices = append(a.Choices, ac)
	}
	if c.Logprobs {
		for _, idx := range logprobsChoices(body) {
			for i := range a.Choices {
				if a.Choices[i].Index == idx {
					a.Choices[i].Logprobs = true
				}
			}
		}
	}
	return a
}

// logprobsChoices are the indexes of the choices of body (a completion or
// a chunk) that carry non-null logprobs.
func logprobsChoices(body []byte) []int {
	var r struct {
		Choices []struct {
			Index    int             `json:"index"`
			Logprobs json.RawMessage `json:"logprobs"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &r) != nil {
		return nil
	}
	var out []int
	for _, c := range r.Choices {
		if len(c.Logprobs) > 0 && string(c.Logprobs) != "null" {
			out = append(out, c.Index)
		}
	}
	return out
}

// ContractStream joins a stream's chunks into its Answer: each choice's
// text, its finish reason, its tool calls by index with their argument
// fragments in order. It keeps only what the contract reads: the text
// only when a clause reads it (a format, stop sequences).
type ContractStream struct {
	c        *Contract
	keepText bool
	a        Answer
	calls    [][]streamCall // per choice (position in a.Choices)
}

type streamCall struct {
	index int
	name  string
	args  []byte
	// Messages: the block start's input, and whether a delta followed
	// (then the deltas are the input).
	start []byte
	delta bool
}

// arguments are the call's arguments as joined.
func (c *streamCall) arguments() string {
	if !c.delta && len(c.start) > 0 {
		return string(c.start)
	}
	return string(c.args)
}

// NewStream starts joining a stream's answer for c.
func (c *Contract) NewStream() *ContractStream {
	return &ContractStream{c: c, keepText: c.Format != FormatText || len(c.Stop) > 0 || c.Logprobs, a: Answer{CompletionTokens: -1}}
}

// Chunk adds one chunk (data is its bytes, read again only for logprobs).
func (s *ContractStream) Chunk(r *openai.Response, data []byte) {
	if r.Usage != nil {
		s.a.CompletionTokens = r.Usage.CompletionTokens
	}
	for i := range r.Choices {
		ch := &r.Choices[i]
		at := s.choice(ch.Index)
		ac := &s.a.Choices[at]
		if ch.FinishReason != "" {
			ac.Finish = ch.FinishReason
		}
		if s.keepText {
			ac.Text += ch.Delta.Content
		}
		for _, tc := range ch.Delta.ToolCalls {
			calls := s.calls[at]
			j := slices.IndexFunc(calls, func(c streamCall) bool { return c.index == tc.Index })
			if j < 0 {
				calls = append(calls, streamCall{index: tc.Index})
				j = len(calls) - 1
			}
			if tc.Function.Name != "" {
				calls[j].name = tc.Function.Name
			}
			calls[j].args = append(calls[j].args, tc.Function.Arguments...)
			s.calls[at] = calls
		}
	}
	if s.c.Logprobs && len(r.Choices) > 0 {
		for _, idx := range logprobsChoices(data) {
			s.a.Choices[s.choice(idx)].Logprobs = true
		}
	}
}

// choice is the position of the choice with index idx, added if new.
func (s *ContractStream) choice(idx int) int {
	for i := range s.a.Choices {
		if s.a.Choices[i].Index == idx {
			return i
		}
	}
	s.a.Choices = append(s.a.Choices, AnswerChoice{Index: idx})
	s.calls = append(s.calls, nil)
	return len(s.a.Choices) - 1
}

// Answer is the stream's answer so far (after its last chunk: the whole).
func (s *ContractStream) Answer() Answer {
	for i, calls := range s.calls {
		s.a.Choices[i].Calls = s.a.Choices[i].Calls[:0]
		for _, c := range calls {
			s.a.Choices[i].Calls = append(s.a.Choices[i].Calls, Call{Name: c.name, Arguments: string(c.args)})
		}
	}
	return s.a
}

// Contract is the contract the stream's answer is held to.
func (s *ContractStream) Contract() *Contract { return s.c }
