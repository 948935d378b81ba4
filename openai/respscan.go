package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/custody-gateway/custody/internal/jsonscan"
)

// scanResponse is Response.Decode's fast path: a field scanner over b,
// which must be valid JSON (json.Valid), in the manner of the request's
// (scan.go). It fills r exactly as json.Unmarshal would, or reports false
// and leaves the body to json.Unmarshal: for anything it does not handle
// the same way with certainty — a key that only matches a field when
// case-folded or unescaped, a duplicated field, a value of another type
// than its field's, an error object — encoding/json decides and words
// the error.
//
// It allocates the strings it keeps (escaped ones through json.Unmarshal
// of that one string) and the choices; everything else is skipped
// without decoding. A chat completion is decoded in a fraction of
// encoding/json's time, and a stream chunk too.
func scanResponse(b []byte, r *Response) bool { return scanResponseAfter(b, r, nil) }

// scanResponseAfter is scanResponse after prev, the stream's previous
// chunk (nil: none): a string equal to prev's in the same field is
// prev's, not a copy. A stream's chunks repeat their id, model and
// fingerprint; each would otherwise be allocated again for every token.
func scanResponseAfter(b []byte, r, prev *Response) bool {
	i := jsonscan.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false // null, arrays, scalars: json.Unmarshal's errors
	}
	s := respScan{b: b}
	if prev == nil {
		prev = &Response{}
	}
	var seen uint16
	s.members(i, responseFields, &seen, func(f, vs, ve int) {
		switch f {
		case fID:
			s.strAfter(vs, ve, &r.ID, prev.ID)
		case fObject:
			s.str(vs, ve, &r.Object)
		case fCreated:
			s.int64(vs, ve, &r.Created)
		case fModel:
			s.strAfter(vs, ve, &r.Model, prev.Model)
		case fFingerprint:
			s.strAfter(vs, ve, &r.SystemFingerprint, prev.SystemFingerprint)
		case fChoices:
			s.choices(vs, ve, &r.Choices)
		case fUsage:
			s.usage(vs, ve, &r.Usage)
		case fError:
			if !s.null(vs, ve) {
				s.ok = false // its code is a RawMessage: encoding/json's to fill
			}
		case fData:
			s.data(vs, ve, r)
		}
	})
	return s.ok
}

// The fields of each object scanned, by JSON name, in field order.
const (
	fID = iota
	fObject
	fCreated
	fModel
	fFingerprint
	fChoices
	fUsage
	fError
	fData
)

var (
	responseFields = fieldNames("id", "object", "created", "model", "system_fingerprint", "choices", "usage", "error", "data")
	choiceFields   = fieldNames("index", "finish_reason", "message", "delta", "text", "logprobs")
	contentFields  = fieldNames("role", "content", "tool_calls", "reasoning_content", "reasoning", "refusal", "function_call", "audio")
	toolCallFields = fieldNames("index", "id", "function")
	functionFields = fieldNames("name", "arguments")
	usageFields    = fieldNames("prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details")
	detailsFields  = fieldNames("cached_tokens")
	outDetails     = fieldNames("reasoning_tokens")
	dataFields     = fieldNames("index")
)

func fieldNames(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}

type respScan struct {
	b  []byte
	ok bool
}

// members calls fn with the field number and value range of each member
// of the object at b[i] whose key is one of fields, exactly. A key that
// is one only case-folded or unescaped (encoding/json would fill the
// field), or a field seen twice (the later wins there), ends the fast
// path. seen has a bit per field.
func (s *respScan) members(i int, fields [][]byte, seen *uint16, fn func(f, vs, ve int)) {
	s.ok = true
	eachMember(s.b, i, func(key []byte, vs, ve int) error {
		if !s.ok {
			return nil
		}
		if bytes.IndexByte(key, '\\') >= 0 {
			s.ok = false
			return nil
		}
		for f, name := range fields {
			if bytes.Equal(key, name) {
				if *seen&(1<<f) != 0 {
					s.ok = false
					return nil
				}
				*seen |= 1 << f
				fn(f, vs, ve)
				return nil
			}
			if bytes.EqualFold(key, name) {
				s.ok = false
				return nil
			}
		}
		return nil
	})
}

func (s *respScan) null(vs, ve int) bool { return ve-vs == 4 && s.b[vs] == 'n' }

// str stores a string value; null leaves dst as it is, as encoding/json
// does.
func (s *respScan) str(vs, ve int, dst *string) { s.strAfter(vs, ve, dst, "") }

// strAfter is str where the same field held prev before: a value equal
// to prev is stored as prev, without a copy, and one of the values
// nearly every response repeats is stored as a constant.
func (s *respScan) strAfter(vs, ve int, dst *string, prev string) {
	v := s.b[vs:ve]
	switch {
	case s.null(vs, ve):
	case v[0] != '"':
		s.ok = false
	case bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v):
		raw := v[1 : len(v)-1]
		if prev != "" && string(raw) == prev { // compared without a copy
			*dst = prev
		} else if c, ok := common(raw); ok {
			*dst = c
		} else {
			*dst = string(raw)
		}
	default:
		// Escapes, or bytes encoding/json replaces with U+FFFD.
		if json.Unmarshal(v, dst) != nil {
			s.ok = false
		}
	}
}

// common returns the constant equal to v among the values of object,
// role and finish_reason that responses repeat, if it is one.
func common(v []byte) (string, bool) {
	switch string(v) { // compared without a copy
	case "chat.completion":
		return "chat.completion", true
	case "chat.completion.chunk":
		return "chat.completion.chunk", true
	case "text_completion":
		return "text_completion", true
	case "list":
		return "list", true
	case "assistant":
		return "assistant", true
	case "stop":
		return "stop", true
	case "length":
		return "length", true
	case "tool_calls":
		return "tool_calls", true
	case "content_filter":
		return "content_filter", true
	}
	return "", false
}

// number returns the integer at vs..ve: encoding/json refuses fractions
// and exponents for an integer field, and out-of-range values.
func (s *respScan) number(vs, ve int, bits int) (int64, bool) {
	v := s.b[vs:ve]
	if s.null(vs, ve) {
		return 0, false
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') || bytes.ContainsAny(v, ".eE") {
		s.ok = false
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	if err != nil {
		s.ok = false
		return 0, false
	}
	return n, true
}

func (s *respScan) int64(vs, ve int, dst *int64) {
	if n, ok := s.number(vs, ve, 64); ok {
		*dst = n
	}
}

func (s *respScan) int(vs, ve int, dst *int) {
	if n, ok := s.number(vs, ve, strconv.IntSize); ok {
		*dst = int(n)
	}
}

// object checks that vs..ve is an object (true) or null (false, dst
// untouched); anything else ends the fast path.
func (s *respScan) object(vs, ve int) bool {
	switch {
	case s.null(vs, ve):
		return false
	case s.b[vs] != '{':
		s.ok = false
		return false
	}
	return true
}

// nested scans the object at vs with fields, then restores ok.
func (s *respScan) nested(vs int, fields [][]byte, fn func(f, vs, ve int)) {
	var seen uint16
	outer := s.ok
	s.members(vs, fields, &seen, fn)
	s.ok = s.ok && outer
}

func (s *respScan) choices(vs, ve int, dst *[]Choice) {
	objects(s, vs, ve, dst, choiceFields, func(c *Choice, f, vs, ve int) {
		switch f {
		case 0:
			s.int(vs, ve, &c.Index)
		case 1:
			s.str(vs, ve, &c.FinishReason)
		case 2:
			c.HasMessage = s.content(vs, ve, &c.Message)
		case 3:
			s.content(vs, ve, &c.Delta)
		case 4:
			s.str(vs, ve, &c.Text)
		case 5:
			if !s.null(vs, ve) {
				s.ok = false // rare and nested: encoding/json's to fill
			}
		}
	})
}

// objects stores the array of objects at vs..ve in dst as encoding/json
// does: null leaves dst as it is, an empty array is an empty (not nil)
// slice, a null element is a zero one, and each object's members of
// fields go to fill; anything else ends the fast path.
func objects[T any](s *respScan, vs, ve int, dst *[]T, fields [][]byte, fill func(e *T, f, vs, ve int)) {
	switch {
	case s.null(vs, ve):
		return
	case s.b[vs] != '[':
		s.ok = false
		return
	}
	out := []T{}
	eachElement(s.b, vs, func(k, es int) error {
		ee := jsonscan.Value(s.b, es)
		var zero T
		out = append(out, zero)
		if !s.ok || !s.object(es, ee) {
			return nil
		}
		e := &out[len(out)-1]
		s.nested(es, fields, func(f, vs, ve int) { fill(e, f, vs, ve) })
		return nil
	})
	*dst = out
}

// content fills dst from the object at vs..ve; it reports whether there
// was one (not null).
func (s *respScan) content(vs, ve int, dst *Content) bool {
	if !s.object(vs, ve) {
		return false
	}
	s.nested(vs, contentFields, func(f, vs, ve int) {
		switch f {
		case 0:
			s.str(vs, ve, &dst.Role)
		case 1:
			s.str(vs, ve, &dst.Content)
		case 2:
			s.toolCalls(vs, ve, &dst.ToolCalls)
		case 3:
			s.str(vs, ve, &dst.ReasoningContent)
		case 4:
			s.str(vs, ve, &dst.Reasoning)
		case 5:
			s.str(vs, ve, &dst.Refusal)
		case 6, 7:
			if !s.null(vs, ve) {
				s.ok = false // deprecated or rare: encoding/json's to fill
			}
		}
	})
	return true
}

func (s *respScan) toolCalls(vs, ve int, dst *[]ToolCall) {
	objects(s, vs, ve, dst, toolCallFields, func(tc *ToolCall, f, vs, ve int) {
		switch f {
		case 0:
			s.int(vs, ve, &tc.Index)
		case 1:
			s.str(vs, ve, &tc.ID)
		case 2:
			if s.object(vs, ve) {
				s.nested(vs, functionFields, func(f, vs, ve int) {
					switch f {
					case 0:
						s.str(vs, ve, &tc.Function.Name)
					case 1:
						s.str(vs, ve, &tc.Function.Arguments)
					}
				})
			}
		}
	})
}

func (s *respScan) usage(vs, ve int, dst **Usage) {
	if !s.object(vs, ve) {
		return
	}
	u := &Usage{}
	s.nested(vs, usageFields, func(f, vs, ve int) {
		switch f {
		case 0:
			s.int(vs, ve, &u.PromptTokens)
		case 1:
			s.int(vs, ve, &u.CompletionTokens)
		case 2:
			s.int(vs, ve, &u.TotalTokens)
		case 3:
			if s.object(vs, ve) {
				u.PromptTokensDetails = &struct {
					CachedTokens int `json:"cached_tokens"`
				}{}
				s.nested(vs, detailsFields, func(_, vs, ve int) { s.int(vs, ve, &u.PromptTokensDetails.CachedTokens) })
			}
		case 4:
			if s.object(vs, ve) {
				u.CompletionTokensDetails = &struct {
					ReasoningTokens int `json:"reasoning_tokens"`
				}{}
				s.nested(vs, outDetails, func(_, vs, ve int) { s.int(vs, ve, &u.CompletionTokensDetails.ReasoningTokens) })
			}
		}
	})
	*dst = u
}

func (s *respScan) data(vs, ve int, r *Response) {
	objects(s, vs, ve, &r.Data, dataFields, func(e *Embedding, _, vs, ve int) { s.int(vs, ve, &e.Index) })
}
