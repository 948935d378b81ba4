package tokenize

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/custody-gateway/custody/internal/fixtures"
)

// realTokenizers caches the real tokenizers across tests: Gemma-3's takes
// a few seconds to load.
var realTokenizers sync.Map // family -> *HFTokenizer

// realTokenizer loads the real tokenizer.json of family (see
// internal/fixtures for where it comes from).
func realTokenizer(t testing.TB, family string) *HFTokenizer {
	t.Helper()
	if testing.Short() {
		t.Skip("loads a real tokenizer.json (up to 33 MB)")
	}
	if tok, ok := realTokenizers.Load(family); ok {
		return tok.(*HFTokenizer)
	}
	dir := fixtures.Tokenizer(t, family)
	tok, err := LoadHFTokenizer(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatalf("%s: %v", family, err)
	}
	realTokenizers.Store(family, tok)
	return tok
}

// ids is Count's tokenization as token ids, for tests.
func (t *HFTokenizer) ids(text string) []int {
	var ids []uint32
	t.encode(text, &ids, -1)
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// firstDiff describes where two id lists first differ.
func firstDiff(got, want []int) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-3)
	return fmt.Sprintf("first difference at %d: got %v, want %v", i, got[lo:min(len(got), i+5)], want[lo:min(len(want), i+5)])
}

// TestLlamaCppCountsChatTemplates: llama.cpp's prompt_tokens for every
// request it rendered is the llama.cpp variant's count of the rendered
// text plus its BOS, in every family; and the token ids are llama.cpp's.
func TestLlamaCppCountsChatTemplates(t *testing.T) {
	for _, family := range fixtures.Families {
		t.Run(family, func(t *testing.T) {
			tok := realTokenizer(t, family).LlamaCpp()
			prefix := tok.SpecialPrefix()
			n, bad := 0, 0
			for _, l := range fixtures.ChatTemplates(t, family) {
				if l.EngineTokens == nil {
					continue
				}
				n++
				got := tok.ids(l.Rendered)
				want := l.EngineTokenIDs[prefix:]
				if c := tok.Count(l.Rendered); c != len(got) {
					t.Errorf("%s: Count = %d but %d ids", l.ID, c, len(got))
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					bad++
					if bad <= 5 {
						t.Errorf("%s (%s): %d tokens, llama.cpp %d; %s", l.ID, l.Category, len(got)+prefix, *l.EngineTokens, firstDiff(got, want))
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d lines differ", bad, n)
			}
			t.Logf("%d lines, all equal to llama.cpp's ids", n)
		})
	}
}

// TestSpecialPrefix: what each family's tokenizer adds before a text.
// llama.cpp adds its BOS to every family but Qwen3 (the fixtures' ids start
// with it); the tokenizers library adds what the post-processor and
// tokenizer_config.json's add_bos_token say.
func TestSpecialPrefix(t *testing.T) {
	cases := []struct {
		family       string
		hf, llamaCpp int
	}{
		{"llama3", 0, 1}, // no TemplateProcessing; llama.cpp's Llama-3 default
		{"llama3_1", 1, 1},
		{"qwen3", 0, 0},
		{"deepseek_v3", 1, 1}, // add_bos_token
		{"gemma3", 1, 1},
	}
	for _, c := range cases {
		t.Run(c.family, func(t *testing.T) {
			tok := realTokenizer(t, c.family)
			if got := tok.SpecialPrefix(); got != c.hf {
				t.Errorf("SpecialPrefix = %d, want %d", got, c.hf)
			}
			if got := tok.LlamaCpp().SpecialPrefix(); got != c.llamaCpp {
				t.Errorf("LlamaCpp().SpecialPrefix = %d, want %d", got, c.llamaCpp)
			}
		})
	}
}

// TestHFAndLlamaCppDifferOnQwen3: where the two Qwen3 variants count the
// rendered prompt differently (NFC, "</s>"), the default one counts as
// transformers did (hf_prompt_tokens), and the llama.cpp one as llama.cpp.
func TestHFAndLlamaCppDifferOnQwen3(t *testing.T) {
	hf := realTokenizer(t, "qwen3")
	lc := hf.LlamaCpp()
	differ := 0
	for _, l := range fixtures.ChatTemplates(t, "qwen3") {
		if l.EngineTokens == nil {
			continue
		}
		h, c := hf.Count(l.Rendered), lc.Count(l.Rendered)
		if h == c {
			continue
		}
		differ++
		if c != *l.EngineTokens {
			t.Errorf("%s: llama.cpp variant %d, engine %d", l.ID, c, *l.EngineTokens)
		}
		switch {
		case l.HFTokens == nil:
			t.Logf("%s: HF variant %d, llama.cpp %d; transformers did not render it", l.ID, h, c)
		case h != *l.HFTokens:
			t.Errorf("%s: HF variant %d, transformers %d (llama.cpp %d)", l.ID, h, *l.HFTokens, c)
		}
	}
	if differ < 4 {
		t.Errorf("the variants differ on %d lines, want at least the README's 4", differ)
	}
}
