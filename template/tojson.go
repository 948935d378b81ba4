package template

import (
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

// floatMark brackets a float's Python form while a template renders it.
// NUL never occurs in a JSON-decoded string that reaches a template
// unescaped, and tojson escapes it, so both spellings are looked for.
const floatMark = "\x00custody-float:"

// pyFloats returns v with every float whose shortest form differs from
// Python's replaced by a marker holding Python's form.
func pyFloats(v jinja.Value) jinja.Value {
	switch {
	case v.IsFloat():
		f := v.AsFloat()
		if py := formatFloat(f, floatPython); py != formatFloat(f, floatShortest) {
			return jinja.NewString(floatMark + py + "\x00")
		}
	case v.IsList():
		its := v.AsList().Items
		out := make([]jinja.Value, len(its))
		for i, it := range its {
			out[i] = pyFloats(it)
		}
		return jinja.NewList(out)
	case v.IsDict():
		out := jinja.NewDict()
		d := v.AsDict()
		for _, k := range d.Keys {
			out.AsDict().Set(k, pyFloats(d.Data[k]))
		}
		return out
	}
	return v
}

// unmarkFloats writes the Python form of each float pyFloats marked, as
// tojson quoted it or as the template printed it bare.
func unmarkFloats(s string) string {
	if !strings.Contains(s, "custody-float:") {
		return s
	}
	for _, m := range []struct{ open, close string }{
		{`"\u0000custody-float:`, `\u0000"`},
		{floatMark, "\x00"},
	} {
		for {
			i := strings.Index(s, m.open)
			if i < 0 {
				break
			}
			j := strings.Index(s[i+len(m.open):], m.close)
			if j < 0 {
				break
			}
			num := s[i+len(m.open) : i+len(m.open)+j]
			s = s[:i] + num + s[i+len(m.open)+j+len(m.close):]
		}
	}
	return s
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
