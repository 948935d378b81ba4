package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// maxDepth bounds the nesting of a decoded request: deeper JSON is
// refused rather than recursed into.
const maxDepth = 128

// decode parses JSON into jinja values, keeping object keys in their
// order (a Python dict does, and tojson prints them so) and numbers as
// ints when written without a fraction or exponent. It is a small
// scanner of its own: encoding/json's token stream cost 17 µs on a
// 220-byte request, on the path before forwarding. Strings decode as
// encoding/json decodes them (invalid UTF-8 and lone surrogates become
// U+FFFD); FuzzDecode holds the two to the same values.
func decode(data []byte) (jinja.Value, error) {
	v, _, err := decodeInts(data, false)
	return v, err
}

// decodeInts is decode, with an integer literal between int64's maximum
// and uint64's wrapped into int64 when wrap is set, as llama.cpp's Jinja
// engine takes it (nlohmann's unsigned integer read as int64_t:
// 18446744073709551615 is -1); without wrap it is a float, as Python
// would print it nearly. big reports whether an integer literal was
// outside int64.
func decodeInts(data []byte, wrap bool) (v jinja.Value, big bool, err error) {
	p := &parser{b: data, wrap: wrap}
	v, err = p.document()
	return v, p.big, err
}

func (p *parser) document() (jinja.Value, error) {
	p.space()
	v, err := p.value(0)
	if err != nil {
		return jinja.Undefined(), err
	}
	p.space()
	if p.i != len(p.b) {
		return jinja.Undefined(), p.errorf("trailing data after JSON value")
	}
	return v, nil
}

type parser struct {
	b []byte
	i int
	// wrap: integers past int64 wrap as llama.cpp's engine reads them;
	// big: such an integer was read.
	wrap, big bool
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON at byte %d: "+format, append([]any{p.i}, args...)...)
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (jinja.Value, error) {
	if depth > maxDepth {
		return jinja.Undefined(), p.errorf("nested deeper than %d", maxDepth)
	}
	if p.i >= len(p.b) {
		return jinja.Undefined(), p.errorf("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return jinja.NewDict(), nil
		}
		// The members are gathered first, so that the dict's key list is
		// made once at its size (Dict.Set grew it member by member);
		// set in order, a repeated key keeps its first place and its last
		// value, as with Set as they come.
		var small [8]member
		ms := small[:0]
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return jinja.Undefined(), p.errorf("want an object key")
			}
			k, err := p.str()
			if err != nil {
				return jinja.Undefined(), err
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return jinja.Undefined(), p.errorf("want ':'")
			}
			p.i++
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return jinja.Undefined(), err
			}
			ms = append(ms, member{k, v})
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == '}' {
				p.i++
				obj := jinja.NewDict()
				d := obj.AsDict()
				d.Keys = make([]string, 0, len(ms))
				for _, m := range ms {
					d.Set(m.k, m.v)
				}
				return obj, nil
			}
			return jinja.Undefined(), p.errorf("want ',' or '}'")
		}
	case c == '[':
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return jinja.NewList(nil), nil
		}
		var small [8]jinja.Value // gathered, then copied once at the list's size
		its := small[:0]
		for {
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return jinja.Undefined(), err
			}
			its = append(its, v)
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				return jinja.NewList(slices.Clone(its)), nil
			}
			return jinja.Undefined(), p.errorf("want ',' or ']'")
		}
	case c == '"':
		if v, ok := p.commonValue(); ok {
			return v, nil
		}
		s, err := p.str()
		return jinja.NewString(s), err
	case c == 't':
		return jinja.NewBool(true), p.literal("true")
	case c == 'f':
		return jinja.NewBool(false), p.literal("false")
	case c == 'n':
		return jinja.None(), p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return jinja.Undefined(), p.errorf("unexpected %q", p.b[p.i])
}

func (p *parser) literal(word string) error {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return p.errorf("bad literal")
	}
	p.i += len(word)
	return nil
}

// number scans JSON's number grammar.
func (p *parser) number() (jinja.Value, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return jinja.Undefined(), p.errorf("bad number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return jinja.Undefined(), p.errorf("bad number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return jinja.Undefined(), p.errorf("bad number")
		}
	}
	n := json.Number(p.b[start:p.i])
	v := number(n)
	if v.IsFloat() && !strings.ContainsAny(string(n), ".eE") {
		p.big = true
		if u, err := strconv.ParseUint(string(n), 10, 64); err == nil && p.wrap {
			return jinja.NewInt(int64(u)), nil
		}
	}
	return v, nil
}

// str scans a string at p.i (its opening quote). Without escapes or
// invalid UTF-8 it is one copy of the bytes.
// member is an object's member as the parser gathers it.
type member struct {
	k string
	v jinja.Value
}

// The string values every chat request repeats, made once: a string
// made a value is an allocation (jinja.NewString boxes it).
var (
	valueUser      = jinja.NewString("user")
	valueAssistant = jinja.NewString("assistant")
	valueSystem    = jinja.NewString("system")
	valueTool      = jinja.NewString("tool")
	valueText      = jinja.NewString("text")
	valueFunction  = jinja.NewString("function")
	valueObject    = jinja.NewString("object")
	valueString    = jinja.NewString("string")
)

// commonValue reads the string at p.i if it is one of the common values
// (written plainly: no escape), and reports whether it was.
func (p *parser) commonValue() (jinja.Value, bool) {
	end := bytes.IndexByte(p.b[p.i+1:], '"')
	if end < 0 || end > len("assistant") {
		return jinja.Value{}, false
	}
	var v jinja.Value
	switch string(p.b[p.i+1 : p.i+1+end]) { // compared without a copy
	case "user":
		v = valueUser
	case "assistant":
		v = valueAssistant
	case "system":
		v = valueSystem
	case "tool":
		v = valueTool
	case "text":
		v = valueText
	case "function":
		v = valueFunction
	case "object":
		v = valueObject
	case "string":
		v = valueString
	default:
		return jinja.Value{}, false
	}
	p.i += end + 2
	return v, true
}

// str reads the string at p.i. A key every chat request repeats is
// returned as a constant, without a copy.
func (p *parser) str() (string, error) {
	p.i++
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := commonKey(p.b[start:p.i])
			p.i++
			return s, nil
		case c == '\\' || c >= utf8.RuneSelf:
			return p.slowStr(start)
		case c < 0x20:
			return "", p.errorf("control character in string")
		}
		p.i++
	}
	return "", p.errorf("unterminated string")
}

// commonKey is string(b), a constant for the keys chat requests repeat.
func commonKey(b []byte) string {
	switch string(b) { // compared without a copy
	case "role":
		return "role"
	case "content":
		return "content"
	case "type":
		return "type"
	case "text":
		return "text"
	case "name":
		return "name"
	case "model":
		return "model"
	case "messages":
		return "messages"
	case "tool_calls":
		return "tool_calls"
	case "tool_call_id":
		return "tool_call_id"
	case "function":
		return "function"
	case "arguments":
		return "arguments"
	case "id":
		return "id"
	case "tools":
		return "tools"
	case "description":
		return "description"
	case "parameters":
		return "parameters"
	case "properties":
		return "properties"
	case "required":
		return "required"
	case "max_tokens":
		return "max_tokens"
	case "stream":
		return "stream"
	}
	return string(b)
}

// slowStr finishes a string with escapes or non-ASCII bytes, as
// encoding/json decodes it.
func (p *parser) slowStr(start int) (string, error) {
	var b strings.Builder
	b.Write(p.b[start:p.i])
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(p.b[p.i : p.i+n])
			}
			p.i += n
		case c != '\\':
			b.WriteByte(c)
			p.i++
		default:
			if p.i+1 >= len(p.b) {
				return "", p.errorf("unterminated string")
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", p.errorf("bad \\u escape")
				}
				if utf16.IsSurrogate(r) {
					// A pair makes one rune; a lone half is U+FFFD.
					save := p.i
					if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						p.i += 2
						if r2, ok := p.hex4(); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b.WriteRune(dec)
								continue
							}
						}
					}
					p.i = save
					r = utf8.RuneError
				}
				b.WriteRune(r)
			default:
				return "", p.errorf("bad escape")
			}
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// number keeps an integer an int (Python's json.loads does) and anything
// with a fraction or exponent a float.
func number(n json.Number) jinja.Value {
	if !strings.ContainsAny(string(n), ".eE") {
		if i, err := n.Int64(); err == nil {
			return jinja.NewInt(i)
		}
	}
	f, err := n.Float64()
	if err != nil {
		return jinja.NewString(string(n))
	}
	return jinja.NewFloat(f)
}

// get returns obj[key], or Undefined when obj is not a dict or lacks it.
func get(obj jinja.Value, key string) jinja.Value {
	if !obj.IsDict() {
		return jinja.Undefined()
	}
	v, ok := obj.AsDict().Get(key)
	if !ok {
		return jinja.Undefined()
	}
	return v
}

// str returns v as a string, or "" when it is not one.
func str(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return ""
}

// items returns v's items, or nil when it is not a list.
func items(v jinja.Value) []jinja.Value {
	if v.IsList() {
		return v.AsList().Items
	}
	return nil
}

// clone copies a dict one level deep, so a preprocessing step can change
// a message without changing the client's.
func clone(obj jinja.Value) jinja.Value {
	out := jinja.NewDict()
	if obj.IsDict() {
		src := obj.AsDict()
		out.AsDict().Keys = make([]string, 0, len(src.Keys)) // made once, not grown key by key
		for _, k := range src.Keys {
			out.AsDict().Set(k, src.Data[k])
		}
	}
	return out
}

// dict builds an ordered dict from key, value pairs.
func dict(kv ...any) jinja.Value {
	out := jinja.NewDict()
	for i := 0; i+1 < len(kv); i += 2 {
		v, ok := kv[i+1].(jinja.Value)
		if !ok {
			v = jinja.FromGoValue(kv[i+1])
		}
		out.AsDict().Set(kv[i].(string), v)
	}
	return out
}

// without returns a copy of obj without key (a dict keeps its order).
func without(obj jinja.Value, key string) jinja.Value {
	out := jinja.NewDict()
	src := obj.AsDict()
	for _, k := range src.Keys {
		if k != key {
			out.AsDict().Set(k, src.Data[k])
		}
	}
	return out
}
