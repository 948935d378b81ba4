package accounting

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

// strictTemplate refuses a conversation that does not start with a user
// turn, as Gemma-3's does for a broken alternation.
const strictTemplate = `{%- if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with a user turn') }}{% endif -%}
{%- for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}`

func testModel(t *testing.T, src string) *Model {
	t.Helper()
	c, err := tokenize.Lookup("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.Parse(src, template.Special{})
	if err != nil {
		t.Fatal(err)
	}
	return &Model{Counter: c, Template: tmpl, Slack: Slack{PerMessage: 8, Fixed: 64}}
}

func prepare(t *testing.T, m *Model, engines []template.Engine, body string) (*Prepared, error) {
	t.Helper()
	p, err := openai.ParsePrompt(openai.EndpointChat, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return m.PrepareChat(engines, p, []byte(body))
}

func TestTemplateRefusalIsARaiseError(t *testing.T) {
	m := testModel(t, strictTemplate)
	for _, e := range []template.Engine{template.EngineLlamaCpp, template.EngineVLLM, template.EngineAuto} {
		_, err := prepare(t, m, []template.Engine{e}, `{"model":"m","messages":[{"role":"assistant","content":"hi"}]}`)
		var re *template.RaiseError
		if !errors.As(err, &re) || re.Message != "Conversation must start with a user turn" {
			t.Errorf("%s: err %v, want the template's refusal", e, err)
		}
	}
}

func TestBands(t *testing.T) {
	m := testModel(t, strictTemplate)
	c := m.Counter
	rendered := "<user>hello there</user><assistant>"
	n := c.Count(rendered)
	tests := []struct {
		name   string
		engine template.Engine
		body   string
		lo, hi int
	}{
		{"named engine: exact", template.EngineLlamaCpp, `{"messages":[{"role":"user","content":"hello there"}]}`, n, n + RenderedSlack},
		// The template writes no BOS: an unnamed engine may add one.
		{"auto: one more for a BOS", template.EngineAuto, `{"messages":[{"role":"user","content":"hello there"}]}`, n, n + RenderedSlack + 1},
		{"media widen only the top", template.EngineLlamaCpp,
			`{"messages":[{"role":"user","content":[{"type":"text","text":"hello there"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`,
			n, n + MaxMediaTokens + RenderedSlack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pp, err := prepare(t, m, []template.Engine{tt.engine}, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			got := pp.Count().For(tt.engine)
			if got.Band.Lo != tt.lo || got.Band.Hi != tt.hi || got.Local != tt.lo {
				t.Errorf("count %+v, want [%d,%d]", got, tt.lo, tt.hi)
			}
		})
	}
}

func TestUntemplatedBounds(t *testing.T) {
	m := testModel(t, strictTemplate)
	m.Template = nil
	c := m.Counter
	body := `{"messages":[{"role":"system","content":"  be brief  "},{"role":"developer","content":"dropped by some"},` +
		`{"role":"assistant","content":"<think>plan</think>answer","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]},` +
		`{"role":"user","name":"bob","content":"go"}],"tools":[{"type":"function","function":{"name":"f"}}]}`
	pp, err := prepare(t, m, []template.Engine{template.EngineOpenAI}, body)
	if err != nil {
		t.Fatal(err)
	}
	got := pp.Count().For(template.EngineOpenAI)
	// Certain text only: trimmed content, no developer turn, no reasoning.
	lo := c.Count("be brief") + c.Count("answer") + c.Count("go")
	if got.Band.Lo != lo {
		t.Errorf("lower bound %d, want %d", got.Band.Lo, lo)
	}
	framed := tokenize.Chat(c, []tokenize.Message{{Role: "system", Content: "  be brief  "}, {Role: "developer", Content: "dropped by some"},
		{Role: "assistant", Content: "<think>plan</think>answer"}, {Role: "user", Name: "bob", Content: "go"}})
	if got.Local != framed {
		t.Errorf("local %d, want OpenAI's framing %d", got.Local, framed)
	}
	if got.Band.Hi < framed+toolsPreamble+toolAllowance+toolCallAllowance+4*8+64 {
		t.Errorf("upper bound %d leaves no room for tools, calls and slack", got.Band.Hi)
	}
}

func TestLeastOverEngines(t *testing.T) {
	// llama.cpp maps developer to system; vLLM passes it and this
	// template, like Qwen3's, renders no developer turn.
	m := testModel(t, `{% for m in messages %}{% if m.role in ['system','user'] %}[{{ m.content }}]{% endif %}{% endfor %}`)
	pp, err := prepare(t, m, []template.Engine{template.EngineLlamaCpp, template.EngineVLLM},
		`{"messages":[{"role":"developer","content":"a long developer instruction"},{"role":"user","content":"hi"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	c := pp.Count()
	l, v := c.For(template.EngineLlamaCpp).Local, c.For(template.EngineVLLM).Local
	if l <= v || c.Least() != v {
		t.Errorf("llamacpp %d, vllm %d, least %d", l, v, c.Least())
	}
}

// TestLargeBodiesAreNotRendered: above MaxRenderedBody the untemplated
// bounds serve, so a huge prompt is never copied through the template.
func TestLargeBodiesAreNotRendered(t *testing.T) {
	m := testModel(t, strictTemplate)
	big := strings.Repeat("word ", MaxRenderedBody/5+1)
	body := `{"messages":[{"role":"assistant","content":"` + big + `"}]}`
	pp, err := prepare(t, m, []template.Engine{template.EngineLlamaCpp}, body)
	if err != nil {
		t.Fatalf("a large body went through the template (which refuses it): %v", err)
	}
	n := pp.Count().For(template.EngineLlamaCpp)
	// The content's count, less what counting a text past
	// tokenize.MaxPiece in chunks may be off by.
	if words, cs := m.Counter.Count(strings.TrimSpace(big)), tokenize.ChunkSlack(len(big)+len("assistant")); n.Band.Lo != words-cs {
		t.Errorf("lower bound %d, want the content's %d less %d", n.Band.Lo, words, cs)
	}
}

// TestBytesBoundsTheRendering: a template that adds more text than the
// request's JSON has bytes makes the prompt longer than the body, and
// the capacity preflight must see that length.
func TestBytesBoundsTheRendering(t *testing.T) {
	m := testModel(t, `{% for m in messages %}`+strings.Repeat("instructions ", 100)+`{{ m.content }}{% endfor %}`)
	body := `{"messages":[{"role":"user","content":"hi"}]}`
	pp, err := prepare(t, m, []template.Engine{template.EngineLlamaCpp}, body)
	if err != nil {
		t.Fatal(err)
	}
	if got := pp.Bytes([]byte(body)); got != len(strings.Repeat("instructions ", 100))+2 {
		t.Errorf("Bytes %d, want the rendering's length", got)
	}
	m.Template = nil
	pp, _ = prepare(t, m, nil, body)
	if got := pp.Bytes([]byte(body)); got != len(body) {
		t.Errorf("untemplated Bytes %d, want the body's %d", got, len(body))
	}
}

// TestLeastIgnoresTheUntemplatedCountUnlessAsked: the capacity check
// holds a rendered prompt to its rendering, not to OpenAI's framing of
// it, unless some route counts it that way.
func TestLeastIgnoresTheUntemplatedCountUnlessAsked(t *testing.T) {
	m := testModel(t, strings.Repeat("instructions ", 50)+`{% for m in messages %}{{ m.content }}{% endfor %}`)
	body := `{"messages":[{"role":"user","content":"hi"}]}`
	pp, _ := prepare(t, m, []template.Engine{template.EngineLlamaCpp}, body)
	c := pp.Count()
	if c.Least() != c.For(template.EngineLlamaCpp).Local || c.Least() < 50 {
		t.Errorf("least %d, llamacpp %d", c.Least(), c.For(template.EngineLlamaCpp).Local)
	}
	pp, _ = prepare(t, m, []template.Engine{template.EngineLlamaCpp, template.EngineOpenAI}, body)
	c = pp.Count()
	if c.Least() != c.For(template.EngineOpenAI).Local {
		t.Errorf("with an openai route, least %d, want the untemplated %d", c.Least(), c.For(template.EngineOpenAI).Local)
	}
}

// TestTemplateFailureIsNotARefusal: a template that fails for a reason
// of its own (not raise_exception) counts the prompt untemplated rather
// than refusing a request the engine may well serve.
func TestTemplateFailureIsNotARefusal(t *testing.T) {
	m := testModel(t, `{{ messages[0].content.no_such_method() }}`)
	body := `{"messages":[{"role":"user","content":"hello"}]}`
	pp, err := prepare(t, m, []template.Engine{template.EngineLlamaCpp}, body)
	if err != nil || pp.Unrendered == nil {
		t.Fatalf("err %v, unrendered %v", err, pp.Unrendered)
	}
	if n := pp.Count().For(template.EngineLlamaCpp); n.Band.Lo != m.Counter.Count("hello") {
		t.Errorf("count %+v, want the untemplated bounds", n)
	}
}
