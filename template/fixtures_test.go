package template

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/internal/fixtures"
)

// TestFixturesRenderLikeLlamaCpp renders every request of the corpus as
// llama.cpp does and compares the text with the prompt llama.cpp itself
// rendered: the same text, or the same refusal.
func TestFixturesRenderLikeLlamaCpp(t *testing.T) {
	for _, fam := range fixtures.Families {
		t.Run(fam, func(t *testing.T) {
			tmpl, err := Load(fixtures.Tokenizer(t, fam))
			if err != nil {
				t.Fatal(err)
			}
			same, refused := 0, 0
			for _, l := range fixtures.ChatTemplates(t, fam) {
				p, err := tmpl.Render(EngineLlamaCpp, l.Request)
				if l.EngineTokens == nil {
					var re *RaiseError
					if errors.As(err, &re) || p.Media > 0 {
						refused++
						continue
					}
					t.Errorf("%s (%s): llama.cpp refused (%s); custody rendered (err %v)", l.ID, l.Category, l.EngineError, err)
					continue
				}
				if err != nil {
					t.Errorf("%s (%s): %v", l.ID, l.Category, err)
					continue
				}
				want := tmpl.BOS() + l.Rendered
				if p.Text != want {
					t.Errorf("%s (%s):\n%s", l.ID, l.Category, firstDiff(p.Text, want))
					continue
				}
				same++
			}
			t.Logf("%s: %d rendered as llama.cpp did, %d refused as it did", fam, same, refused)
		})
	}
}

// TestFixturesRenderLikeVLLM compares with the corpus's emulation of
// vLLM (Python jinja2 after vLLM's preprocessing).
func TestFixturesRenderLikeVLLM(t *testing.T) {
	for _, fam := range fixtures.Families {
		t.Run(fam, func(t *testing.T) {
			tmpl, err := Load(fixtures.Tokenizer(t, fam))
			if err != nil {
				t.Fatal(err)
			}
			same, refused := 0, 0
			for _, l := range fixtures.ChatTemplates(t, fam) {
				if l.HFPyVLLMTokens == nil {
					p, err := tmpl.Render(EngineVLLM, l.Request)
					var re *RaiseError
					if errors.As(err, &re) || p.Media > 0 {
						refused++
						continue
					}
					t.Errorf("%s (%s): the vLLM emulation refused (%s); custody rendered (err %v)", l.ID, l.Category, l.HFPyVLLMError, err)
					continue
				}
				want := l.HFPyVLLMRendered
				if want == "" {
					want = l.Rendered
				}
				p, err := tmpl.Render(EngineVLLM, l.Request)
				if err != nil {
					t.Errorf("%s (%s): %v", l.ID, l.Category, err)
					continue
				}
				got := strings.TrimPrefix(p.Text, tmpl.BOS())
				want = strings.TrimPrefix(want, tmpl.BOS())
				if got != want {
					t.Errorf("%s (%s):\n%s", l.ID, l.Category, firstDiff(got, want))
					continue
				}
				same++
			}
			t.Logf("%s: %d rendered as vLLM would, %d refused as it would", fam, same, refused)
		})
	}
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-60)
	clip := func(s string) string { return s[min(lo, len(s)):min(i+80, len(s))] }
	return "got:  …" + quoteShort(clip(got)) + "\nwant: …" + quoteShort(clip(want))
}

func quoteShort(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", `\n`), "\t", `\t`)
}

// TestFixturesUniform: where Uniform says every engine renders a
// request alike, llama.cpp's and vLLM's renderings are the same text (a
// caller then renders once). Most of the corpus is not uniform by design
// (tools, calls, prefill); the simple requests are.
func TestFixturesUniform(t *testing.T) {
	for _, fam := range fixtures.Families {
		t.Run(fam, func(t *testing.T) {
			tmpl, err := Load(fixtures.Tokenizer(t, fam))
			if err != nil {
				t.Fatal(err)
			}
			uniform := 0
			for _, l := range fixtures.ChatTemplates(t, fam) {
				req, err := ParseRequest(l.Request)
				if err != nil || !tmpl.Uniform(req) {
					continue
				}
				uniform++
				a, errA := tmpl.RenderRequest(EngineLlamaCpp, req)
				b, errB := tmpl.RenderRequest(EngineVLLM, req)
				if a.Text != b.Text || (errA == nil) != (errB == nil) {
					t.Errorf("%s (%s): uniform, but the engines differ:\n%s", l.ID, l.Category, firstDiff(a.Text, b.Text))
				}
			}
			t.Logf("%s: %d uniform requests render alike", fam, uniform)
		})
	}
}
