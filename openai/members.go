package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/custody-gateway/custody/internal/jsonscan"
)

// Strict members. custody reads a few members of a request and of a
// response; the client, the upstream and custody must all read the same
// ones. JSON parsers disagree on a duplicate member (first wins, last
// wins, error) and Go's encoding/json matches names without regard to
// case (so "Model" is model to Go and not to Python), and a hand-written
// scanner may not unescape "mod\u0065l". A body that is ambiguous in any
// of these ways, in a member custody checks, is refused; everywhere else
// (metadata, JSON Schemas of tools) such keys are the client's business.
//
// Keys are compared after JSON unescaping, case folded as encoding/json
// and strings.EqualFold fold them (Unicode simple folding: the Kelvin sign
// is a k).

// members lists the checked members of one JSON object and, for those
// whose value custody reads inside, the members of that value (an object,
// or each object of an array).
type members struct {
	names [][]byte
	strs  []string // names, as strings
	inner map[string]*members
}

func memberSet(names ...string) *members {
	m := &members{names: make([][]byte, len(names)), strs: names}
	for i, n := range names {
		m.names[i] = []byte(n)
	}
	return m
}

func (m *members) with(name string, inner *members) *members {
	if m.inner == nil {
		m.inner = map[string]*members{}
	}
	m.inner[name] = inner
	return m
}

// requestMembers are what custody, its prompt counting and the chat
// template rendering read from a request.
var requestMembers = func() *members {
	function := memberSet("name", "arguments")
	toolCall := memberSet("id", "type", "function").with("function", function)
	part := memberSet("type", "text")
	message := memberSet("role", "content", "name", "tool_calls", "tool_call_id", "function_call", "reasoning_content").
		with("content", part).with("tool_calls", toolCall).with("function_call", function)
	toolFunction := memberSet("name", "description", "parameters", "strict")
	tool := memberSet("type", "function").with("function", toolFunction)
	toolChoice := memberSet("type", "function").with("function", memberSet("name"))
	return memberSet("model", "messages", "prompt", "input", "suffix", "tools", "tool_choice",
		"functions", "function_call", "stream", "stream_options", "n", "max_tokens",
		"max_completion_tokens", "echo", "add_generation_prompt", "continue_final_message",
		"chat_template", "chat_template_kwargs", "cache_salt", "cache_prompt",
		// What the contract check holds the answer to (Asked).
		"parallel_tool_calls", "response_format", "stop", "logprobs", "top_logprobs",
		"include_stop_str_in_output").
		with("messages", message).with("tools", tool).with("tool_choice", toolChoice).
		with("functions", toolFunction).with("function_call", memberSet("name")).
		with("stream_options", memberSet("include_usage"))
}()

// responseMembers are what custody checks in a response or stream chunk.
var responseMembers = func() *members {
	function := memberSet("name", "arguments")
	toolCall := memberSet("index", "id", "type", "function").with("function", function)
	content := memberSet("role", "content", "tool_calls", "reasoning_content", "reasoning", "refusal",
		"function_call", "audio").
		with("tool_calls", toolCall).with("function_call", function).with("audio", memberSet("transcript"))
	token := memberSet("token", "top_logprobs").with("top_logprobs", memberSet("token"))
	logprobs := memberSet("content", "refusal", "tokens").with("content", token).with("refusal", token)
	choice := memberSet("index", "finish_reason", "message", "delta", "text", "logprobs").
		with("message", content).with("delta", content).with("logprobs", logprobs)
	usage := memberSet("prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details").
		with("prompt_tokens_details", memberSet("cached_tokens")).with("completion_tokens_details", memberSet("reasoning_tokens"))
	return memberSet("id", "object", "created", "model", "system_fingerprint", "choices", "usage", "error", "data").
		with("choices", choice).with("usage", usage).
		with("error", memberSet("message", "type", "code")).
		with("data", memberSet("index"))
}()

// memberError is an ambiguous member: where, and what.
type memberError struct {
	path string // e.g. "messages[2].content[0]"; "" at the top level
	msg  string
}

func (e *memberError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

// strictObject checks the object at b[i] (valid JSON) against m, and
// calls visit, if not nil, with each checked member's name and value
// range.
func strictObject(b []byte, i int, m *members, visit func(name string, vs, ve int) error) error {
	return strictObjectAt(b, i, m, make(where, 0, 8), visit)
}

// strictObjectAt is strictObject of the object at at. Each level appends
// its place to at for the next (in at's own array, which no level keeps).
func strictObjectAt(b []byte, i int, m *members, at where, visit func(name string, vs, ve int) error) error {
	var seen uint64 // bit j: m.names[j] was seen
	return eachMember(b, i, func(raw []byte, vs, ve int) error {
		key := raw
		escaped := bytes.IndexByte(raw, '\\') >= 0
		if escaped {
			var s string
			if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
				// Cannot happen on valid JSON; refuse rather than guess.
				return &memberError{at.String(), fmt.Sprintf("member key %q cannot be read", raw)}
			}
			key = []byte(s)
		}
		j := -1
		for n, name := range m.names {
			if bytes.EqualFold(key, name) {
				j = n
				break
			}
		}
		if j < 0 {
			return nil
		}
		name, str := m.names[j], m.strs[j]
		switch {
		case !bytes.Equal(key, name):
			return &memberError{at.String(), fmt.Sprintf("member %q differs from %q only in case", key, name)}
		case escaped:
			return &memberError{at.String(), fmt.Sprintf("member %q is written with escapes (%q)", name, raw)}
		case seen&(1<<j) != 0:
			return &memberError{at.String(), fmt.Sprintf("duplicate member %q", name)}
		}
		seen |= 1 << j
		if inner := m.inner[str]; inner != nil {
			if err := strictValue(b, vs, inner, append(at, place{name: str})); err != nil {
				return err
			}
		}
		if visit != nil {
			return visit(str, vs, ve)
		}
		return nil
	})
}

// strictValue checks the value at b[i] when it is an object, or each
// object element when it is an array; other values have no members.
func strictValue(b []byte, i int, m *members, at where) error {
	switch b[i] {
	case '{':
		return strictObjectAt(b, i, m, at, nil)
	case '[':
		return eachElement(b, i, func(k, vs int) error {
			if b[vs] != '{' {
				return nil
			}
			return strictObjectAt(b, vs, m, append(at, place{index: k, element: true}), nil)
		})
	}
	return nil
}

// where is a place in a body, from the top: the members and elements
// leading to it. It is formatted only for an error
// ("messages[2].content"); strictObject keeps one, on its stack, for a
// whole body (a closure per level, as it was, cost an allocation per
// message and per member with members).
type where []place

type place struct {
	name    string
	index   int
	element bool // an element (index) rather than a member (name)
}

func (w where) String() string {
	var s strings.Builder
	for _, p := range w {
		switch {
		case p.element:
			s.WriteString("[" + strconv.Itoa(p.index) + "]")
		case s.Len() > 0:
			s.WriteString("." + p.name)
		default:
			s.WriteString(p.name)
		}
	}
	return s.String()
}

// ErrAmbiguous is wrapped by a response that custody refuses because a
// member it checks is duplicated or written in a case or escape variant.
var ErrAmbiguous = errors.New("ambiguous members")

// AmbiguousError says which member of a response is ambiguous, and where
// (never its value); it wraps ErrAmbiguous.
type AmbiguousError struct {
	Detail string // e.g. `usage: duplicate member "prompt_tokens"`
}

func (e *AmbiguousError) Error() string { return "upstream body: ambiguous members: " + e.Detail }
func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// checkResponseMembers checks a response or chunk that json.Unmarshal has
// accepted (so b is valid JSON).
func checkResponseMembers(b []byte) error {
	i := jsonscan.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	if err := strictObject(b, i, responseMembers, nil); err != nil {
		return &AmbiguousError{Detail: err.Error()}
	}
	return nil
}
