package template

import (
	"strings"
	"testing"
)

// driftTemplate prints the tools and the tool calls' arguments through
// tojson, as Qwen3's does, and one argument bare.
const driftTemplate = `{% for t in tools %}{{ t.function.parameters | tojson }}#{% endfor %}{% for m in messages %}{% for tc in m.tool_calls %}{{ tc.function.arguments | tojson }}|{{ tc.function.arguments.x }}#{% endfor %}{% endfor %}`

// TestLlamaCppRenderings holds llama.cpp's two tojson printings apart:
// floats, integers past int64 and line separators, in a tool schema and
// in a tool call's JSON-string arguments (what the real llama-server of
// 80fb11a printed: cmd/custody's engine tests check it live).
func TestLlamaCppRenderings(t *testing.T) {
	tmpl, err := Parse(driftTemplate, Special{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, value      string
		shortest, stream string // tojson
		bareStream       string // {{ x }}: std::to_string
	}{
		{"float past six digits", `48.8606111`, `48.8606111`, `48.8606`, `48.860611`},
		{"float rounded up", `12345.67`, `12345.67`, `12345.7`, `12345.67`},
		{"float in exponent form", `1234567.5`, `1.2345675e+06`, `1.23457e+06`, `1234567.5`},
		{"six digits alike", `3.14159`, `3.14159`, `3.14159`, `3.14159`},
		{"integral float", `3.0`, `3`, `3`, `3.0`},
		{"integer past int64", `12345678901234567890`, `1.2345678901234567e+19`, `-6101065172474983726`, `-6101065172474983726`},
		{"uint64 max", `18446744073709551615`, `1.8446744073709552e+19`, `-1`, `-1`},
		{"integer past uint64", `100000000000000000000`, `1e+20`, `1e+20`, `100000000000000000000.0`},
		{"line separator", `"a\u2028b\u2029c"`, "\"a\u2028b\u2029c\"", "\"a\u2028b\u2029c\"", "a\u2028b\u2029c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := `{\"x\": ` + strings.ReplaceAll(c.value, `"`, `\"`) + `}`
			body := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"` + args + `"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}],` +
				`"tools":[{"type":"function","function":{"name":"f","parameters":{"m":` + c.value + `}}}]}`
			req, err := ParseRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []Engine{EngineLlamaCpp, EngineLlamaCppShortest, EngineLlamaCppStream} {
				p, err := tmpl.RenderRequest(e, req)
				if err != nil {
					t.Fatal(err)
				}
				want := c.shortest
				if e == EngineLlamaCppStream {
					want = c.stream
				}
				schema, call, _ := strings.Cut(p.Text, "#")
				if schema != `{"m": `+want+`}` || !strings.HasPrefix(call, `{"x": `+want+`}|`) {
					t.Errorf("%s: rendered %q, want the value printed %s", e, p.Text, want)
				}
				if e == EngineLlamaCppStream {
					if bare := strings.TrimSuffix(strings.SplitN(call, "|", 2)[1], "#"); bare != c.bareStream {
						t.Errorf("%s: bare %q, want %q", e, bare, c.bareStream)
					}
				}
			}
			if got := tmpl.Renderings(EngineLlamaCpp, req); len(got) != 2 && c.name != "line separator" {
				t.Errorf("llamacpp renders it %v ways, want both", got)
			}
		})
	}
}

// TestLlamaCppRenderingsOnce: a request without numbers is rendered once
// for llamacpp (the two engines print it alike), and once for auto when
// every engine renders it alike.
func TestLlamaCppRenderingsOnce(t *testing.T) {
	tmpl, err := Parse(driftTemplate, Special{})
	if err != nil {
		t.Fatal(err)
	}
	req, err := ParseRequest([]byte(`{"messages":[{"role":"user","content":"temperature 0.5"}],"temperature":0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.Renderings(EngineLlamaCpp, req); len(got) != 1 || got[0] != EngineLlamaCppShortest {
		t.Errorf("llamacpp: %v", got)
	}
	if got := tmpl.Renderings(EngineAuto, req); len(got) != 1 {
		t.Errorf("auto: %v", got)
	}
	if got := tmpl.Renderings(EngineLlamaCppStream, req); len(got) != 1 || got[0] != EngineLlamaCppStream {
		t.Errorf("stream: %v", got)
	}
}

// TestSeparatorsRawEveryEngine: tojson writes U+2028 and U+2029 raw
// under vLLM too (json.dumps with ensure_ascii=False); a message's
// content printed bare keeps them, and the text \u2028 typed as six
// characters stays six characters.
func TestSeparatorsRawEveryEngine(t *testing.T) {
	tmpl, err := Parse(`{{ tools | tojson }}|{% for m in messages %}{{ m.content }}{% endfor %}`, Special{})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"role":"user","content":"x\u2028y \\u2028"}],"tools":[{"type":"function","function":{"name":"f","description":"p\u2029q \\u2029"}}]}`
	for _, e := range []Engine{EngineLlamaCpp, EngineLlamaCppStream, EngineVLLM} {
		p, err := tmpl.Render(e, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		_, content, _ := strings.Cut(p.Text, "|")
		if !strings.Contains(p.Text, "p\u2029q \\\\u2029") || content != "x\u2028y \\u2028" {
			t.Errorf("%s: %q", e, p.Text)
		}
	}
}

// TestLlamaCppProbe: custody's own two renderings of the probe are
// classified as what they are, by a template that prints tools and
// arguments through tojson; a template that prints neither is neither.
func TestLlamaCppProbe(t *testing.T) {
	tmpl, err := Parse(driftTemplate, Special{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Engine{EngineLlamaCppShortest, EngineLlamaCppStream} {
		p, err := tmpl.Render(e, []byte(LlamaCppProbe))
		if err != nil {
			t.Fatal(err)
		}
		if got := ClassifyLlamaCpp(p.Text); got != e {
			t.Errorf("%s rendered %q, classified %s", e, p.Text, got)
		}
	}
	plain, err := Parse(`{% for m in messages %}{{ m.content }}{% endfor %}`, Special{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plain.Render(EngineLlamaCppStream, []byte(LlamaCppProbe))
	if err != nil {
		t.Fatal(err)
	}
	if got := ClassifyLlamaCpp(p.Text); got != EngineLlamaCpp {
		t.Errorf("a template without tojson: classified %s", got)
	}
}

// TestLlamaCppWrapsArgumentsAlone: an integer past int64 only inside a
// tool call's JSON-string arguments wraps too (found against the real
// llama-server: the body itself held none).
func TestLlamaCppWrapsArgumentsAlone(t *testing.T) {
	tmpl, err := Parse(driftTemplate, Special{})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\": 18446744073709551615}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`
	p, err := tmpl.Render(EngineLlamaCppStream, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Text, `{"x": -1}|-1`) {
		t.Errorf("rendered %q", p.Text)
	}
}
