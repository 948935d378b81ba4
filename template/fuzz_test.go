package template

import (
	"testing"
)

// FuzzRender renders untrusted request bodies with the built-in template
// and a template that uses the features real ones do: it must return a
// prompt or an error, never panic or hang.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]},{"role":"assistant","content":"pre"}]}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{\"a\":[1,2.5,{\"b\":null}]}"}}]},{"role":"tool","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
		`{"messages":[{"role":"developer","content":"d"}],"chat_template_kwargs":{"enable_thinking":false},"reasoning_effort":"none"}`,
		`{"messages":[{"role":"user","content":"\u0000custody-float:1.0\u0000"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":18446744073709551615,\"b\":48.8606111,\"c\":\"x\u2028\"}"}}]},{"role":"tool","content":"r"}],"tools":[{"type":"function","function":{"name":"f","description":"p\u2029\u0000custody-sep:2028\u0000","parameters":{"m":12345678901234567890}}}]}`,
	} {
		f.Add([]byte(s))
	}
	chatml, err := Builtin(BuiltinChatML)
	if err != nil {
		f.Fatal(err)
	}
	qwenish, err := Parse(`{%- set ns = namespace(last=messages|length - 1) %}{%- for m in messages[::-1] %}{%- if m.role == 'user' %}{%- set ns.last = loop.index0 %}{%- endif %}{%- endfor %}`+
		`{%- for m in messages %}{{ m.role }}:{{ (m.content or '').split('</think>')[-1].lstrip('\n') }}{% if m.tool_calls %}{% for c in m.tool_calls %}{{ c.function.arguments | tojson }}{% endfor %}{% endif %}|{% endfor %}`+
		`{%- for t in tools or [] %}{{ t | tojson }}{% endfor %}{% if add_generation_prompt %}>{% endif %}`, Special{BOS: "<s>"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, tmpl := range []*Template{chatml, qwenish} {
			for _, e := range append(Engines, EngineLlamaCppStream) {
				tmpl.Render(e, body)
			}
		}
	})
}
