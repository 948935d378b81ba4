package template

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// floatStyle is how a template prints a float: engines differ. The
// Jinja engine prints the shortest form; Python's is kept by standing
// each float that would print differently in for a marker string while
// the template renders, and writing the float's Python form where the
// marker lands (pyFloats, unmarkFloats).
type floatStyle int

const (
	// floatShortest prints the shortest form, an integral float without
	// a fraction ("3", "2.5e+10"): what llama.cpp's template engine
	// prints.
	floatShortest floatStyle = iota
	// floatPython prints Python's repr ("3.0", "25000000000.0",
	// "1e+16"): what transformers' tojson (json.dumps) prints, so vLLM
	// and SGLang.
	floatPython
)

func formatFloat(f float64, style floatStyle) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if style == floatShortest {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	// Python's repr: the shortest digits, in exponent form when the
	// decimal exponent is below -4 or at least 16, and always with a
	// fraction or an exponent.
	exp := 0
	if f != 0 {
		exp = int(math.Floor(math.Log10(math.Abs(f))))
		// Log10 can be off by one at powers of ten; the 'e' form knows.
		es := strconv.FormatFloat(f, 'e', -1, 64)
		if i := strings.IndexByte(es, 'e'); i >= 0 {
			exp, _ = strconv.Atoi(es[i+1:])
		}
	}
	if exp < -4 || exp >= 16 {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// floatMark brackets a float's printed forms while a template renders
// it: the form tojson writes, "\x01", the form a bare {{ x }} writes.
// NUL never occurs in a JSON-decoded string that reaches a template
// unescaped, and tojson escapes it, so both spellings are looked for.
const floatMark = "\x00custody-float:"

// floatForms says how an engine prints a float through tojson and bare,
// and whether that differs from what custody's Jinja engine prints.
type floatForms func(f float64) (tojson, bare string, differs bool)

// pythonForms are Python's: repr both ways (json.dumps prints repr).
func pythonForms(f float64) (string, string, bool) {
	py := formatFloat(f, floatPython)
	return py, py, py != formatFloat(f, floatShortest)
}

// streamForms are llama.cpp's Jinja engine's (common/jinja, as in
// 80fb11a): tojson writes a C++ stream's default (printf's %g: six
// significant digits, 48.8606111 is 48.8606), a bare float
// std::to_string's %f with its trailing zeros cut but one ("3.0").
func streamForms(f float64) (string, string, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return formatFloat(f, floatShortest), formatFloat(f, floatShortest), false
	}
	bare := strings.TrimRight(strconv.FormatFloat(f, 'f', 6, 64), "0")
	if strings.HasSuffix(bare, ".") {
		bare += "0"
	}
	return strconv.FormatFloat(f, 'g', 6, 64), bare, true
}

// markFloats returns v with every float that forms prints differently
// replaced by a marker holding its forms.
func markFloats(v jinja.Value, forms floatForms) jinja.Value {
	switch {
	case v.IsFloat():
		if j, bare, differs := forms(v.AsFloat()); differs {
			return jinja.NewString(floatMark + j + "\x01" + bare + "\x00")
		}
	case v.IsList():
		its := v.AsList().Items
		out := make([]jinja.Value, len(its))
		for i, it := range its {
			out[i] = markFloats(it, forms)
		}
		return jinja.NewList(out)
	case v.IsDict():
		out := jinja.NewDict()
		d := v.AsDict()
		for _, k := range d.Keys {
			out.AsDict().Set(k, markFloats(d.Data[k], forms))
		}
		return out
	}
	return v
}

// pyFloats marks the floats Python prints differently.
func pyFloats(v jinja.Value) jinja.Value { return markFloats(v, pythonForms) }

// unmarkFloats writes each float markFloats marked: its tojson form
// where tojson quoted the marker, its bare form where the template
// printed it bare.
func unmarkFloats(s string) string {
	if !strings.Contains(s, "custody-float:") {
		return s
	}
	for _, m := range []struct {
		open, sep, close string
		form             int
	}{
		{`"\u0000custody-float:`, `\u0001`, `\u0000"`, 0},
		{floatMark, "\x01", "\x00", 1},
	} {
		s = unmark(s, m.open, m.close, func(inner string) string {
			forms := strings.SplitN(inner, m.sep, 2)
			if len(forms) < 2 {
				return forms[0]
			}
			return forms[m.form]
		})
	}
	return s
}

// unmark replaces each open...close in s by f of what it brackets.
func unmark(s, open, close string, f func(string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		j := strings.Index(s[i+len(open):], close)
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(f(s[i+len(open) : i+len(open)+j]))
		s = s[i+len(open)+j+len(close):]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s)
	return b.String()
}

// Line and paragraph separators: custody's Jinja engine escapes U+2028
// and U+2029 in tojson (as Go's encoding/json does), while every engine
// it reproduces writes them raw (Python's json.dumps with
// ensure_ascii=False, llama.cpp's engines). A string of the JSON a
// template prints through tojson (tools, tool-call arguments) holds
// them as markers while it renders, written raw afterwards. Message
// contents, which templates print bare, keep theirs.
const (
	sepMark      = "\x00custody-sep:"
	sepMarkQuote = `\u0000custody-sep:`
)

// hasSeparators reports whether raw JSON may hold U+2028 or U+2029,
// raw or escaped. Case matters not: hex digits of 2028 have no case.
func hasSeparators(raw []byte) bool {
	return bytes.Contains(raw, []byte("\u2028")) || bytes.Contains(raw, []byte("\u2029")) ||
		bytes.Contains(raw, []byte(`\u2028`)) || bytes.Contains(raw, []byte(`\u2029`))
}

// markSeparators returns v with U+2028 and U+2029 in its strings (keys
// included) replaced by markers.
func markSeparators(v jinja.Value) jinja.Value {
	mark := func(s string) string {
		if !strings.ContainsAny(s, "\u2028\u2029") {
			return s
		}
		return strings.NewReplacer("\u2028", sepMark+"2028\x00", "\u2029", sepMark+"2029\x00").Replace(s)
	}
	switch {
	case v.IsString():
		return jinja.NewString(mark(v.AsString()))
	case v.IsList():
		its := v.AsList().Items
		out := make([]jinja.Value, len(its))
		for i, it := range its {
			out[i] = markSeparators(it)
		}
		return jinja.NewList(out)
	case v.IsDict():
		out := jinja.NewDict()
		d := v.AsDict()
		for _, k := range d.Keys {
			out.AsDict().Set(mark(k), markSeparators(d.Data[k]))
		}
		return out
	}
	return v
}

// markToolSeparators marks the separators of what templates print
// through tojson: the tools and the messages' tool calls.
func markToolSeparators(msgs []jinja.Value, tools jinja.Value) ([]jinja.Value, jinja.Value) {
	out := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		out[i] = m
		if calls, ok := m.AsDict().Get("tool_calls"); ok {
			out[i] = clone(m)
			out[i].AsDict().Set("tool_calls", markSeparators(calls))
		}
	}
	return out, markSeparators(tools)
}

// unmarkSeparators writes the separators markSeparators marked, raw.
func unmarkSeparators(s string) string {
	if !strings.Contains(s, "custody-sep:") {
		return s
	}
	sep := func(inner string) string {
		if inner == "2029" {
			return "\u2029"
		}
		return "\u2028"
	}
	s = unmark(s, sepMarkQuote, `\u0000`, sep)
	return unmark(s, sepMark, "\x00", sep)
}

// dumpTemplate prints a value as a template's tojson does.
var dumpTemplate = mustCompile("{{ value | tojson }}")

func mustCompile(src string) *jinja.Template {
	t, err := jinja.Compile(src)
	if err != nil {
		panic(err) // a constant template: a bug here, not bad input
	}
	return t
}

// TemplateJSON re-prints raw JSON as a chat template's tojson prints it
// (Python's ", " and ": " separators, keys in order): the form tool
// definitions take in a rendered prompt.
func TemplateJSON(raw []byte) (string, error) {
	v, err := decode(raw)
	if err != nil {
		return "", err
	}
	return dumpTemplate.RenderValues(map[string]jinja.Value{"value": v})
}
