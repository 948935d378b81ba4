// Package openai holds the parts of the OpenAI wire format that custody
// reads and writes: the request fields it routes and counts on, the
// response fields it checks, the SSE stream, and the error body.
//
// custody never re-encodes a client's request: it locates the few
// top-level fields it must rewrite (model, stream_options) and splices the
// bytes, so what reaches the upstream is the client's body with exactly
// those edits.
package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/custody-gateway/custody/internal/jsonscan"
	"github.com/custody-gateway/custody/internal/jsonvalid"
)

// Endpoint names, as recorded in the ledger.
const (
	EndpointChat        = "chat.completions"
	EndpointCompletions = "completions"
	EndpointEmbeddings  = "embeddings"
)

// Request is what custody learns from a request body without decoding
// the prompt: the top-level fields it routes on and where they are.
type Request struct {
	Body         []byte
	Model        string
	Stream       bool
	IncludeUsage bool // stream_options.include_usage was true
	// N is the choices asked for (n); 0 when absent, null or not an
	// integer (the upstream's to refuse): one.
	N int
	// Asked is what the request asks of its answer, as the contract
	// check reads it (check.ChatContract).
	Asked Asked

	model, streamOptions span // byte ranges in Body; zero when absent
	// set are the members custody may set (cache_salt, cache_prompt):
	// where the client's values are, to be overwritten.
	set map[string]span
}

// Asked holds the raw values (JSON, sub-slices of the body; nil when
// absent) of the top-level members that say what the answer must honour:
// the tools it may call and how, its format, its limits. They are strict
// members (members.go): a client and custody read the same ones.
type Asked struct {
	Tools, ToolChoice, ParallelToolCalls, ResponseFormat []byte
	MaxTokens, MaxCompletionTokens, N, Stop              []byte
	Logprobs, TopLogprobs, IncludeStopStrInOutput        []byte
}

// Member is a top-level member custody sets in the forwarded body,
// replacing the client's value if it sent one.
type Member struct {
	Name  string
	Value []byte // JSON
}

// settable are the top-level members custody may set (Member), which a
// client's copy of must then be found and overwritten.
var settable = map[string]bool{"cache_salt": true, "cache_prompt": true}

type span struct{ start, end int }

// ErrBadRequest is wrapped by every parse error; the message is safe to
// show to the client (it never quotes the body).
var ErrBadRequest = errors.New("invalid request body")

func badf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadRequest}, args...)...)
}

// ParseRequest validates body (JSON, UTF-8, an object) and reads its
// top-level model, stream and stream_options fields.
func ParseRequest(body []byte) (*Request, error) {
	if !utf8.Valid(body) {
		return nil, badf("not valid UTF-8")
	}
	if !jsonvalid.Valid(body) {
		return nil, badf("not valid JSON")
	}
	r := &Request{Body: body}
	i := jsonscan.Space(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, badf("the body must be a JSON object")
	}
	// One pass: the checked members, each exactly once (strictObject),
	// are the ones read here; ParsePrompt may then decode the body with
	// encoding/json and read the same ones.
	err := strictObject(body, i, requestMembers, func(key string, vs, ve int) error {
		v := body[vs:ve]
		switch key {
		case "model":
			var s string
			if v[0] != '"' {
				return badf("model must be a string")
			}
			if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 {
				s = string(inner) // its own text: valid JSON and UTF-8, without escapes (the decoder's work saved)
			} else if json.Unmarshal(v, &s) != nil {
				return badf("model must be a string")
			}
			r.Model, r.model = s, span{vs, ve}
		case "stream":
			switch string(v) {
			case "true":
				r.Stream = true
			case "false", "null":
			default:
				return badf("stream must be a boolean")
			}
		case "tools":
			r.Asked.Tools = v
		case "tool_choice":
			r.Asked.ToolChoice = v
		case "parallel_tool_calls":
			r.Asked.ParallelToolCalls = v
		case "response_format":
			r.Asked.ResponseFormat = v
		case "max_tokens":
			r.Asked.MaxTokens = v
		case "max_completion_tokens":
			r.Asked.MaxCompletionTokens = v
		case "n":
			r.Asked.N = v
			if n, err := strconv.Atoi(string(v)); err == nil && n > 0 {
				r.N = n
			}
		case "stop":
			r.Asked.Stop = v
		case "logprobs":
			r.Asked.Logprobs = v
		case "top_logprobs":
			r.Asked.TopLogprobs = v
		case "include_stop_str_in_output":
			r.Asked.IncludeStopStrInOutput = v
		case "cache_salt", "cache_prompt":
			if r.set == nil {
				r.set = map[string]span{}
			}
			r.set[key] = span{vs, ve}
		case "stream_options":
			r.streamOptions = span{vs, ve}
			if string(v) == "null" {
				return nil
			}
			var so struct {
				IncludeUsage *bool `json:"include_usage"`
			}
			if v[0] != '{' || json.Unmarshal(v, &so) != nil {
				return badf("stream_options must be an object")
			}
			r.IncludeUsage = so.IncludeUsage != nil && *so.IncludeUsage
		}
		return nil
	})
	var me *memberError
	if errors.As(err, &me) {
		return nil, badf("%s", me)
	}
	if err != nil {
		return nil, err
	}
	if r.Model == "" {
		return nil, badf("model is required")
	}
	return r, nil
}

// Rewrite returns the body to send upstream: model replaced by
// upstreamModel; for a stream, stream_options.include_usage forced on so
// that custody can check usage; and each of set written, over the
// client's value where it sent one (set names must be settable). The
// client's other bytes are kept.
func (r *Request) Rewrite(upstreamModel string, set ...Member) []byte {
	type edit struct {
		at   span
		with []byte
	}
	var edits []edit
	var inserts [][]byte // new members, after the opening brace
	if upstreamModel != r.Model {
		q, _ := json.Marshal(upstreamModel)
		edits = append(edits, edit{r.model, q})
	}
	if r.Stream && !r.IncludeUsage {
		if r.streamOptions.end > 0 {
			edits = append(edits, edit{r.streamOptions, withIncludeUsage(r.Body[r.streamOptions.start:r.streamOptions.end])})
		} else {
			inserts = append(inserts, []byte(`"stream_options":{"include_usage":true}`))
		}
	}
	for _, m := range set {
		if !settable[m.Name] {
			panic("openai: Rewrite of a member ParseRequest does not locate: " + m.Name) // a bug in the caller
		}
		if at, ok := r.set[m.Name]; ok {
			edits = append(edits, edit{at, m.Value})
			continue
		}
		q, _ := json.Marshal(m.Name)
		inserts = append(inserts, append(append(q, ':'), m.Value...))
	}
	if len(inserts) > 0 {
		at := bytes.IndexByte(r.Body, '{') + 1
		ins := bytes.Join(inserts, []byte(","))
		if !isEmptyObject(r.Body) {
			ins = append(ins, ',')
		}
		edits = append(edits, edit{span{at, at}, ins})
	}
	if len(edits) == 0 {
		return r.Body
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at.start - b.at.start })
	out := make([]byte, 0, len(r.Body)+64)
	prev := 0
	for _, e := range edits {
		out = append(out, r.Body[prev:e.at.start]...)
		out = append(out, e.with...)
		prev = e.at.end
	}
	return append(out, r.Body[prev:]...)
}

// withIncludeUsage returns the stream_options object with include_usage
// set to true (added or replaced), other options kept.
func withIncludeUsage(obj []byte) []byte {
	if string(obj) == "null" {
		return []byte(`{"include_usage":true}`)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return []byte(`{"include_usage":true}`)
	}
	m["include_usage"] = json.RawMessage("true")
	out, _ := json.Marshal(m)
	return out
}

func isEmptyObject(b []byte) bool {
	i := jsonscan.Space(b, bytes.IndexByte(b, '{')+1)
	return i < len(b) && b[i] == '}'
}
