package template

import (
	"errors"
	"testing"
)

// turns is a small template in the shape of the real ones: it trims
// content, ends each turn, and writes the generation prompt on request.
const turns = `{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</s>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}`

func mustParse(t *testing.T, src string) *Template {
	t.Helper()
	tmpl, err := Parse(src, Special{BOS: "<bos>"})
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestRenderPerEngine(t *testing.T) {
	tmpl := mustParse(t, turns)
	tests := []struct {
		name           string
		body           string
		llamacpp, vllm string
	}{
		{"generation prompt", `{"messages":[{"role":"user","content":" hi "}]}`,
			"<bos><user>hi</s><assistant>", "<bos><user>hi</s><assistant>"},
		{"null content and parts", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":null},{"role":"user","content":"c"}]}`,
			"<bos><user>a\nb</s><assistant></s><user>c</s><assistant>", "<bos><user>a\nb</s><assistant></s><user>c</s><assistant>"},
		{"developer", `{"messages":[{"role":"developer","content":"d"},{"role":"user","content":"u"}]}`,
			"<bos><system>d</s><user>u</s><assistant>", "<bos><developer>d</s><user>u</s><assistant>"},
		// llama.cpp continues a final assistant message, untrimmed and
		// unclosed; vLLM closes it and adds the generation prompt.
		{"prefill", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"The answer is: "}]}`,
			"<bos><user>u</s><assistant>The answer is: ", "<bos><user>u</s><assistant>The answer is:</s><assistant>"},
		{"empty prefill", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":""}]}`,
			"<bos><user>u</s>", "<bos><user>u</s><assistant></s><assistant>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for e, want := range map[Engine]string{EngineLlamaCpp: tt.llamacpp, EngineVLLM: tt.vllm, EngineSGLang: tt.vllm} {
				p, err := tmpl.Render(e, []byte(tt.body))
				if err != nil {
					t.Fatalf("%s: %v", e, err)
				}
				if p.Text != want {
					t.Errorf("%s:\n got %q\nwant %q", e, p.Text, want)
				}
			}
		})
	}
}

func TestToolArgumentsAndFloats(t *testing.T) {
	tmpl := mustParse(t, `{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments | tojson }}{% endfor %}{% endfor %}{% for tool in tools or [] %}|{{ tool | tojson }}{% endfor %}`)
	body := `{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":  3.0, \"y\": 2.5e10, \"s\": \"\\u6771\"}"}}]},{"role":"tool","content":"r"}],` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"number","maximum":1.0},"strict":true}}]}`
	for e, want := range map[Engine]string{
		// llama.cpp parses the arguments (this template prints objects)
		// and prints floats shortest; it rebuilds tools without extras.
		EngineLlamaCpp: `{"x": 3, "y": 2.5e+10, "s": "東"}|{"type": "function", "function": {"name": "f", "description": "", "parameters": {"type": "number", "maximum": 1}}}`,
		// vLLM parses them too, prints Python's floats, and dumps tools
		// from its model: description null, extras kept.
		EngineVLLM: `{"x": 3.0, "y": 25000000000.0, "s": "東"}|{"type": "function", "function": {"name": "f", "description": null, "parameters": {"type": "number", "maximum": 1.0}, "strict": true}}`,
	} {
		p, err := tmpl.Render(e, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if p.Text != want {
			t.Errorf("%s:\n got %s\nwant %s", e, p.Text, want)
		}
	}
}

func TestFormatFloatPython(t *testing.T) {
	for f, want := range map[float64]string{3: "3.0", 0.07: "0.07", 2.5e10: "25000000000.0", 1e16: "1e+16", 1e-5: "1e-05", 0.0001: "0.0001", -2: "-2.0", 0: "0.0"} {
		if got := formatFloat(f, floatPython); got != want {
			t.Errorf("formatFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestRaiseAndErrors(t *testing.T) {
	tmpl := mustParse(t, `{% if messages[0].role != 'user' %}{{ raise_exception('must start with user') }}{% endif %}ok`)
	_, err := tmpl.Render(EngineLlamaCpp, []byte(`{"messages":[{"role":"system","content":"s"}]}`))
	var re *RaiseError
	if !errors.As(err, &re) || re.Message != "must start with user" || !IsRaise(err) {
		t.Errorf("err %v, want the template's refusal", err)
	}
	for _, body := range []string{`{"messages":[]}`, `{"messages":"x"}`, `[1]`, `{"messages":[1]}`, `{"messages":[{"role":"user","content":"x"}]} trailing`} {
		if _, err := tmpl.Render(EngineLlamaCpp, []byte(body)); err == nil || IsRaise(err) {
			t.Errorf("%s: err %v, want a plain error", body, err)
		}
	}
	if _, err := tmpl.Render(EngineAuto, []byte(`{"messages":[{"role":"user","content":"x"}]}`)); !errors.Is(err, ErrNotRendered) {
		t.Errorf("auto: %v", err)
	}
	for _, s := range []string{"llamacpp", "vllm", "sglang", "openai", "auto", ""} {
		if _, err := ParseEngine(s); err != nil {
			t.Errorf("ParseEngine(%q): %v", s, err)
		}
	}
	if _, err := ParseEngine("ollama"); err == nil {
		t.Error("ParseEngine(ollama) accepted")
	}
}

// TestVLLMRequestFields: vLLM's add_generation_prompt and
// continue_final_message change its rendering; a client's own
// chat_template is not run.
func TestVLLMRequestFields(t *testing.T) {
	tmpl := mustParse(t, turns)
	for body, want := range map[string]string{
		`{"messages":[{"role":"user","content":"u"}],"add_generation_prompt":false}`:                                                                                "<bos><user>u</s>",
		`{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"The answer is: "}],"continue_final_message":true,"add_generation_prompt":false}`: "<bos><user>u</s><assistant>The answer is:",
	} {
		p, err := tmpl.Render(EngineVLLM, []byte(body))
		if err != nil || p.Text != want {
			t.Errorf("%s:\n got %q, %v\nwant %q", body, p.Text, err, want)
		}
	}
	_, err := tmpl.Render(EngineVLLM, []byte(`{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"a"}],"continue_final_message":true}`))
	if !IsRaise(err) {
		t.Errorf("continue_final_message with the generation prompt: %v, want vLLM's refusal", err)
	}
	if _, err := ParseRequest([]byte(`{"messages":[{"role":"user","content":"u"}],"chat_template":"{{ 'x' }}"}`)); !errors.Is(err, ErrClientTemplate) {
		t.Errorf("a client's chat_template: %v", err)
	}
}
