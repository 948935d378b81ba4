package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/custody-gateway/custody/internal/jsonscan"
	"github.com/custody-gateway/custody/internal/jsonvalid"
	"github.com/custody-gateway/custody/internal/strict"
)

// The texts of the event-stream dialects' responses (Messages, Responses
// pass-through) that a client receives, for the contamination scan.
//
// They are read by member name, case-folded, anywhere in the body: a
// superset of what any client reads (an SDK reads the exact member, which
// is one of the case variants read here, and a duplicate's every value is
// read here), so that no variant, duplicate or unusual place hides text
// from the scan. Under a member whose value is the model's JSON (a
// tool_use input) every string, key and number is text.

// maxTextDepth bounds the nesting jsonTexts follows (encoding/json's own
// limit is 10000).
const maxTextDepth = 10000

var errTooDeep = errors.New("nested too deep")

// jsonTexts calls fn with each text of the JSON value data under a member
// named (case-folded) in keys, with the member's name as keys has it;
// every string, key and number under a member named in whole is a text
// too. It returns the top-level member index's integer value (-1 if
// none); its error is data's not being JSON.
//
// It walks the bytes once, after jsonvalid.Valid: no json.Decoder, whose
// tokens cost an error value built and dropped at the end of every value
// (this runs on every answer and stream event of the Messages and
// Responses wires). Keys and strings are decoded as encoding/json decodes
// them.
func jsonTexts(data []byte, keys, whole []string, fn func(key, s string)) (index int, err error) {
	if !jsonvalid.Valid(data) {
		return -1, errors.New("not JSON")
	}
	w := textWalker{b: data, keys: keys, whole: whole, fn: fn, index: -1}
	w.space()
	if err := w.value("", false, 0); err != nil {
		return -1, err
	}
	return w.index, nil
}

// textWalker walks valid JSON: i is the next byte to read.
type textWalker struct {
	b           []byte
	i           int
	keys, whole []string
	fn          func(key, s string)
	index       int
}

// indexKey marks the top-level index member's value.
const indexKey = "\x00index"

func match(list []string, k string) string {
	for _, n := range list {
		if strings.EqualFold(n, k) {
			return n
		}
	}
	return ""
}

// value reads the value at w.i, a member named key (a keys or whole name,
// or ""), inWhole when under a whole member.
func (w *textWalker) value(key string, inWhole bool, depth int) error {
	switch c := w.b[w.i]; {
	case c == '{' || c == '[':
		if depth >= maxTextDepth {
			return errTooDeep
		}
		w.i++
		for {
			w.space()
			switch w.b[w.i] {
			case '}', ']':
				w.i++
				return nil
			case ',':
				w.i++
				w.space()
			}
			nk, nw := key, inWhole
			if c == '{' {
				raw, value := jsonscan.Key(w.b, w.i)
				w.i = value
				switch k := raw[1 : len(raw)-1]; {
				case inWhole:
					w.fn(key, decodeString(raw))
				case !unescapedASCII(k):
					ks := decodeString(raw)
					if depth == 0 && ks == "index" {
						nk = indexKey
						break
					}
					nk = match(w.keys, ks)
					if m := match(w.whole, ks); m != "" {
						nk, nw = m, true
					}
				case depth == 0 && string(k) == "index":
					nk = indexKey
				default: // matched without a copy of the key
					nk = matchASCII(w.keys, k)
					if m := matchASCII(w.whole, k); m != "" {
						nk, nw = m, true
					}
				}
			}
			if err := w.value(nk, nw, depth+1); err != nil {
				return err
			}
		}
	case c == '"':
		if key == "" || key == indexKey {
			w.skipString()
			return nil
		}
		w.fn(key, w.str())
	case c == '-' || '0' <= c && c <= '9':
		start := w.i
		for w.i < len(w.b) && !strings.ContainsRune(",}] \t\r\n", rune(w.b[w.i])) {
			w.i++
		}
		switch lit := w.b[start:w.i]; {
		case key == indexKey:
			if n, err := strconv.Atoi(string(lit)); err == nil {
				w.index = n
			}
		case inWhole:
			w.fn(key, string(lit))
		}
	default: // true, false, null
		for w.i < len(w.b) && 'a' <= w.b[w.i] && w.b[w.i] <= 'z' {
			w.i++
		}
	}
	return nil
}

func (w *textWalker) space() { w.i = jsonscan.Space(w.b, w.i) }

// skipString moves past the string at w.i.
func (w *textWalker) skipString() { w.i = jsonscan.String(w.b, w.i) }

// str reads the string at w.i, decoded as encoding/json decodes it.
func (w *textWalker) str() string {
	start := w.i
	w.skipString()
	return decodeString(w.b[start:w.i])
}

// decodeString is the valid JSON string raw (quoted) decoded as
// encoding/json decodes it.
func decodeString(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	json.Unmarshal(raw, &s) // valid: it cannot fail
	return s
}

// unescapedASCII reports whether a JSON string's contents are ASCII
// without an escape: their own decoding.
func unescapedASCII(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// matchASCII is match for an ASCII key k, without its copy where the
// names are ASCII too (strings.EqualFold is then ASCII's case folding).
func matchASCII(list []string, k []byte) string {
	for _, n := range list {
		if strict.EqualFoldASCII(k, n) {
			return n
		}
	}
	return ""
}

// Messages: the members whose strings a client reads as the model's text.
// text, thinking and partial_json continue across a block's deltas; the
// others are whole values.
var (
	messagesTextKeys  = []string{"text", "thinking", "partial_json", "name", "cited_text"}
	messagesWholeKeys = []string{"input"}
)

// messagesTexts appends the texts of a Messages response body or stream
// event (stream: an event, whose text, thinking and partial_json continue
// the same block's earlier ones).
func messagesTexts(dst []Text, data []byte, stream bool) []Text {
	var found []Text
	index, err := jsonTexts(data, messagesTextKeys, messagesWholeKeys, func(key, s string) {
		found = appendText(found, key, 0, 0, s)
	})
	if err != nil {
		return dst
	}
	for _, t := range found {
		switch t.Field {
		case "text", "thinking", "partial_json":
			if stream && index >= 0 {
				t.Choice = index
				dst = append(dst, t)
				continue
			}
		}
		t.Whole = true
		dst = append(dst, t)
	}
	return dst
}

// Responses: the members whose strings a client reads as the model's
// text (output text, refusals, reasoning text and summaries, function
// calls' names and arguments, logprob tokens, transcripts). A delta
// event's delta continues the same part's earlier deltas; the rest are
// whole values.
var responsesTextKeys = []string{"delta", "text", "refusal", "arguments", "name", "token", "transcript", "code"}

// responsesTexts appends the texts of a Responses body or stream event.
func responsesTexts(dst []Text, data []byte, stream bool) []Text {
	var found []Text
	if _, err := jsonTexts(data, responsesTextKeys, nil, func(key, s string) {
		found = appendText(found, key, 0, 0, s)
	}); err != nil {
		return dst
	}
	var place *Place
	if stream {
		var e struct {
			Type         string `json:"type"`
			OutputIndex  int    `json:"output_index"`
			ContentIndex *int   `json:"content_index"`
			SummaryIndex *int   `json:"summary_index"`
		}
		if json.Unmarshal(data, &e) == nil && strings.HasSuffix(e.Type, ".delta") {
			p := Place{Field: e.Type, Choice: e.OutputIndex}
			switch {
			case e.ContentIndex != nil:
				p.Index = *e.ContentIndex
			case e.SummaryIndex != nil:
				p.Index = *e.SummaryIndex
			}
			place = &p
		}
	}
	for _, t := range found {
		if place != nil && t.Field == "delta" {
			t.Place = *place
		} else {
			t.Whole = true
		}
		dst = append(dst, t)
	}
	return decodeArguments(dst, false)
}

// argumentFields are the fields whose text is JSON the client's
// application decodes (a tool call's arguments).
var argumentFields = map[string]bool{"tool_calls.function.arguments": true, "function_call.arguments": true, "arguments": true,
	"partial_json": true, "response.function_call_arguments.delta": true}

// tokenWalker is textWalker on json.Decoder's tokens, for text that
// may not be JSON at all (decodeArguments: a tool call's arguments as the
// model wrote them), whose texts up to the first error count.
type tokenWalker struct {
	dec         *json.Decoder
	keys, whole []string
	fn          func(key, s string)
	index       int
}

// value reads one value, a member named key (a keys or whole name, or
// ""), inWhole when under a whole member.
func (w *tokenWalker) value(key string, inWhole bool, depth int) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		if depth >= maxTextDepth {
			return errTooDeep
		}
		if v == '{' {
			for w.dec.More() {
				kt, err := w.dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				nk, nw := key, inWhole
				switch {
				case inWhole:
					w.fn(key, k)
				case depth == 0 && k == "index":
					nk = indexKey
				default:
					nk = match(w.keys, k)
					if m := match(w.whole, k); m != "" {
						nk, nw = m, true
					}
				}
				if err := w.value(nk, nw, depth+1); err != nil {
					return err
				}
			}
		} else {
			for w.dec.More() {
				if err := w.value(key, inWhole, depth+1); err != nil {
					return err
				}
			}
		}
		_, err = w.dec.Token() // the closing delimiter
		return err
	case string:
		if key != "" && key != indexKey {
			w.fn(key, v)
		}
	case json.Number:
		switch {
		case key == indexKey:
			if n, err := strconv.Atoi(v.String()); err == nil {
				w.index = n
			}
		case inWhole:
			w.fn(key, v.String())
		}
	}
	return nil
}

// decodeArguments appends, for each whole tool-call arguments text of
// texts that holds a JSON escape, the strings, keys and numbers it
// decodes to: the application reads "\u0073ecret" as "secret", which
// the scan of the JSON text as written would not. (A stream's argument
// deltas are fragments of JSON, not decodable one by one; their whole
// text is, where an event repeats it.)
func decodeArguments(texts []Text, whole bool) []Text {
	for i, n := 0, len(texts); i < n; i++ {
		t := texts[i]
		if !(whole || t.Whole) || !argumentFields[t.Field] || !strings.Contains(t.S, "\\") {
			continue
		}
		w := tokenWalker{dec: json.NewDecoder(strings.NewReader(t.S)), fn: func(_, s string) {
			texts = append(texts, Text{Place: t.Place, S: s, Whole: true})
		}}
		w.dec.UseNumber()
		_ = w.value(t.Field, true, 0)
	}
	return texts
}
