package accounting

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/custody-gateway/custody/internal/fixtures"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

var (
	modelsMu sync.Mutex
	models   = map[string]*Model{}
)

// fixtureModel loads a family's tokenizer and template as serve does,
// once for all tests. Each test gets its own copy to change.
func fixtureModel(t *testing.T, fam string) *Model {
	t.Helper()
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if m, ok := models[fam]; ok {
		cp := *m
		return &cp
	}
	m := loadFixtureModel(t, fam)
	models[fam] = m
	cp := *m
	return &cp
}

func loadFixtureModel(t *testing.T, fam string) *Model {
	t.Helper()
	dir := fixtures.Tokenizer(t, fam)
	spec := "file:" + filepath.Join(dir, "tokenizer.json")
	c, err := tokenize.Lookup(spec)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := LoadTemplate(spec, "auto", false)
	if err != nil || tmpl == nil {
		t.Fatalf("template: %v", err)
	}
	return &Model{Counter: c, LlamaCpp: c.(*tokenize.HFTokenizer).LlamaCpp(), Template: tmpl, Slack: Slack{PerMessage: 8, Fixed: 64}}
}

func countFixture(t *testing.T, m *Model, e template.Engine, l fixtures.Line) (Count, error) {
	t.Helper()
	p, err := openai.ParsePrompt(openai.EndpointChat, l.Request)
	if err != nil {
		t.Fatalf("%s: %v", l.ID, err)
	}
	pp, err := m.PrepareChat([]template.Engine{e}, p, l.Request)
	if err != nil {
		return Count{}, err
	}
	return pp.Count().For(e), nil
}

// TestFixturesExact holds custody's count to the engine's on every
// request of the corpus: llama.cpp's own count for engine llamacpp, the
// vLLM emulation's for vllm.
func TestFixturesExact(t *testing.T) {
	for _, fam := range fixtures.Families {
		t.Run(fam, func(t *testing.T) {
			m := fixtureModel(t, fam)
			var llama, vllm, nl, nv int
			for _, l := range fixtures.ChatTemplates(t, fam) {
				if l.EngineTokens != nil {
					nl++
					n, err := countFixture(t, m, template.EngineLlamaCpp, l)
					switch {
					case err != nil:
						t.Errorf("%s llamacpp: %v", l.ID, err)
					case n.Local != *l.EngineTokens:
						t.Errorf("%s (%s) llamacpp: counted %d, the engine %d", l.ID, l.Category, n.Local, *l.EngineTokens)
					default:
						llama++
					}
				}
				if l.HFPyVLLMTokens != nil {
					nv++
					n, err := countFixture(t, m, template.EngineVLLM, l)
					switch {
					case err != nil:
						t.Errorf("%s vllm: %v", l.ID, err)
					case n.Local != *l.HFPyVLLMTokens:
						t.Errorf("%s (%s) vllm: counted %d, the emulation %d", l.ID, l.Category, n.Local, *l.HFPyVLLMTokens)
					default:
						vllm++
					}
				}
			}
			t.Logf("%s: llamacpp %d/%d exact, vllm %d/%d exact", fam, llama, nl, vllm, nv)
		})
	}
}

// TestFixturesBands checks that every engine's count is inside the band
// of its engine and of auto, and that the faults the band exists for
// fall outside it: a one-token placeholder, a prompt cut to 60 %, and
// another request's prompt 400 tokens longer.
func TestFixturesBands(t *testing.T) {
	for _, fam := range fixtures.Families {
		t.Run(fam, func(t *testing.T) {
			m := fixtureModel(t, fam)
			inside, refused, ambiguous := 0, 0, 0
			for _, l := range fixtures.ChatTemplates(t, fam) {
				for _, e := range []template.Engine{template.EngineLlamaCpp, template.EngineVLLM, template.EngineAuto} {
					var honest []int
					if l.EngineTokens != nil && e != template.EngineVLLM {
						honest = append(honest, *l.EngineTokens)
					}
					if l.HFPyVLLMTokens != nil && e != template.EngineLlamaCpp {
						honest = append(honest, *l.HFPyVLLMTokens)
					}
					if len(honest) == 0 {
						continue
					}
					n, err := countFixture(t, m, e, l)
					if err != nil {
						t.Errorf("%s %s: %v", l.ID, e, err)
						continue
					}
					for _, h := range honest {
						if !n.Band.Contains(h) {
							t.Errorf("%s (%s) %s: honest %d outside %s", l.ID, l.Category, e, h, n.Band)
						} else {
							inside++
						}
						for _, bad := range []int{1, h * 6 / 10, h + 400} {
							if bad == h {
								continue
							}
							if e == template.EngineAuto && bad >= n.Band.Lo && bad < h {
								// Under auto, a count another engine's
								// honest rendering could give is not
								// refused (a developer message one engine
								// drops): counted, not failed.
								ambiguous++
								continue
							}
							if n.Band.Contains(bad) {
								t.Errorf("%s (%s) %s: fault count %d (honest %d) inside %s", l.ID, l.Category, e, bad, h, n.Band)
							} else {
								refused++
							}
						}
					}
				}
			}
			t.Logf("%s: %d honest counts inside their bands, %d fault counts refused, %d (auto) as low as another engine's rendering", fam, inside, refused, ambiguous)
		})
	}
}

// TestFixturesUntemplated bounds the corpus without its templates (as
// for an OpenAI-family upstream, or chat_template: none): every engine's
// count must still fall inside the bounds.
func TestFixturesUntemplated(t *testing.T) {
	for _, fam := range fixtures.Families {
		t.Run(fam, func(t *testing.T) {
			m := fixtureModel(t, fam)
			m.Template = nil
			inside := 0
			for _, l := range fixtures.ChatTemplates(t, fam) {
				n, err := countFixture(t, m, template.EngineOpenAI, l)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range []*int{l.EngineTokens, l.HFPyVLLMTokens} {
					if h == nil {
						continue
					}
					if !n.Band.Contains(*h) {
						t.Errorf("%s (%s): honest %d outside %s", l.ID, l.Category, *h, n.Band)
						continue
					}
					inside++
				}
			}
			t.Logf("%s: %d honest counts inside the untemplated bounds", fam, inside)
		})
	}
}

// TestLlamaCppAddsTheBOSATemplateOmits: llama.cpp adds its vocabulary's
// BOS to a prompt whose template does not write it, and only then.
func TestLlamaCppAddsTheBOSATemplateOmits(t *testing.T) {
	m := fixtureModel(t, "llama3")
	body := `{"messages":[{"role":"user","content":"hello"}]}`
	p, _ := openai.ParsePrompt(openai.EndpointChat, []byte(body))
	for _, tc := range []struct {
		src   string
		extra int
	}{
		{`{% for m in messages %}{{ m.content }}{% endfor %}`, 1},
		{`{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}`, 0},
	} {
		tmpl, err := template.Parse(tc.src, template.Special{BOS: "<|begin_of_text|>"})
		if err != nil {
			t.Fatal(err)
		}
		m.Template = tmpl
		pp, err := m.PrepareChat([]template.Engine{template.EngineLlamaCpp, template.EngineVLLM}, p, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		c := pp.Count()
		text, _ := tmpl.Render(template.EngineLlamaCpp, []byte(body))
		if got, want := c.For(template.EngineLlamaCpp).Local, m.LlamaCpp.Count(text.Text)+tc.extra; got != want {
			t.Errorf("%s: llamacpp %d, want %d", tc.src, got, want)
		}
		if got, want := c.For(template.EngineVLLM).Local, m.Counter.Count(text.Text); got != want {
			t.Errorf("%s: vllm %d, want %d (vLLM adds no special tokens to a chat prompt)", tc.src, got, want)
		}
	}
}
