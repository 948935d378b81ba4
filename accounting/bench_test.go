package accounting

import (
	"testing"

	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

// BenchmarkPrepareChat is the render that runs before forwarding, for a
// typical small chat request, with the simulator's template and both
// engines of auto; BenchmarkCountChat the tokenizing that runs beside
// forwarding.
func BenchmarkPrepareChat(b *testing.B) {
	m, body, p := benchModel(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.PrepareChat([]template.Engine{template.EngineAuto}, p, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCountChat(b *testing.B) {
	m, body, p := benchModel(b)
	pp, err := m.PrepareChat([]template.Engine{template.EngineAuto}, p, body)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		pp.Count()
	}
}

func benchModel(b *testing.B) (*Model, []byte, *openai.Prompt) {
	c, err := tokenize.Lookup("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := template.Builtin(template.BuiltinChatML)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Summarise the quarterly report in three bullet points, citing the revenue figures and the main risks."}],"max_tokens":128}`)
	p, err := openai.ParsePrompt(openai.EndpointChat, body)
	if err != nil {
		b.Fatal(err)
	}
	return &Model{Counter: c, Template: tmpl, Slack: Slack{8, 64}}, body, p
}
