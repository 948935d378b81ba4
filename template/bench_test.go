package template

import "testing"

var benchBody = []byte(`{"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Summarise the quarterly report in three bullet points, citing the revenue figures and the main risks."}],"max_tokens":128}`)

// BenchmarkParseRequest decodes a typical small chat request;
// BenchmarkRenderRequest renders it with the built-in template, as
// custody does before forwarding.
func BenchmarkParseRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRequest(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderRequest(b *testing.B) {
	tmpl, err := Builtin(BuiltinChatML)
	if err != nil {
		b.Fatal(err)
	}
	req, err := ParseRequest(benchBody)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.RenderRequest(EngineLlamaCpp, req); err != nil {
			b.Fatal(err)
		}
	}
}
