package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// spTokenizer returns a tiny SentencePiece-style tokenizer.json: the
// vocabulary ▁ a b c ▁a ▁b ab ▁ab <unk> <s>, and the 256 <0xNN> tokens;
// merges by rank: "▁ a", "▁ b", "a b", "▁a b". edit changes the decoded JSON.
func spTokenizer(t testing.TB, edit func(m map[string]any)) *HFTokenizer {
	t.Helper()
	vocab := map[string]any{}
	for i, tok := range []string{"<unk>", "<s>", "▁", "a", "b", "c", "▁a", "▁b", "ab", "▁ab"} {
		vocab[tok] = i
	}
	for b := 0; b < 256; b++ {
		vocab[fmt.Sprintf("<0x%02X>", b)] = 10 + b
	}
	m := map[string]any{
		"added_tokens": []any{map[string]any{"id": 1, "content": "<s>", "special": true}},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}},
		"pre_tokenizer": nil,
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>"}}, map[string]any{"Sequence": map[string]any{"id": "A"}}},
			"special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []any{1}}}},
		"model": map[string]any{"type": "BPE", "byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>",
			"vocab": vocab, "merges": []any{"▁ a", "▁ b", "a b", "▁a b"}},
	}
	if edit != nil {
		edit(m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ParseHFTokenizer("sp", data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSentencePieceBPE(t *testing.T) {
	noFallback := func(m map[string]any) { model(m)["byte_fallback"] = false }
	cases := []struct {
		name string
		edit func(m map[string]any)
		text string
		want []int
	}{
		{"empty", nil, "", nil},
		// ▁ab: ▁+a (rank 0) then ▁a+b (3).
		{"prepend and merge", nil, "ab", []int{9}},
		{"spaces", nil, "a b", []int{6, 7}},
		{"merge order", nil, "ba", []int{7, 3}}, // ▁+b (rank 1) first
		// é is not in the vocabulary: its bytes C3 A9.
		{"byte fallback", nil, "é", []int{2, 10 + 0xC3, 10 + 0xA9}},
		{"unk fused", noFallback, "ééc", []int{2, 0, 5}},
		{"unk not fused", func(m map[string]any) { noFallback(m); model(m)["fuse_unk"] = false }, "éé", []int{2, 0, 0}},
		{"no unk: dropped", func(m map[string]any) { noFallback(m); delete(model(m), "unk_token") }, "aé", []int{6}},
		// The normalizer runs on each stretch between added tokens.
		{"added token", nil, "<s>a", []int{1, 6}},
		{"metaspace always", func(m map[string]any) {
			m["normalizer"] = nil
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}
		}, "a<s>b a", []int{6, 1, 7, 6}},
		{"metaspace first", func(m map[string]any) {
			m["normalizer"] = nil
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
		}, "a<s>b a", []int{6, 1, 4, 6}},
		{"metaspace never", func(m map[string]any) {
			m["normalizer"] = nil
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"}
		}, "a b", []int{3, 7}},
		// Split on "b" merged with the previous piece: "▁a" "b": the ▁a+b
		// merge cannot cross pieces.
		{"split merged with previous", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"String": "b"}, "behavior": "MergedWithPrevious"}
		}, "ab", []int{9}},
		{"split isolated", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"String": "b"}, "behavior": "Isolated"}
		}, "ab", []int{6, 4}},
		{"split removed", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "b+"}, "behavior": "Removed"}
		}, "abbba", []int{6, 3}},
		{"split merged with next", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"String": "▁"}, "behavior": "MergedWithNext"}
		}, "a b", []int{6, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := spTokenizer(t, c.edit)
			got := tok.ids(c.text)
			if fmt.Sprint(got) != fmt.Sprint(c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("ids(%q) = %v, want %v", c.text, got, c.want)
			}
			if n := tok.Count(c.text); n != len(c.want) {
				t.Errorf("Count(%q) = %d, want %d", c.text, n, len(c.want))
			}
		})
	}
	if got := spTokenizer(t, nil).SpecialPrefix(); got != 1 {
		t.Errorf("SpecialPrefix = %d, want 1 (TemplateProcessing's <s>)", got)
	}
}

func TestSentencePieceRefusals(t *testing.T) {
	for name, edit := range map[string]func(m map[string]any){
		"byte fallback without byte tokens": func(m map[string]any) {
			delete(model(m)["vocab"].(map[string]any), "<0x7F>")
		},
		"replace with a regex": func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " +"}, "content": "▁"}
		},
		"metaspace scheme": func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}
		},
		"post-processor": func(m map[string]any) { m["post_processor"] = map[string]any{"type": "Bespoke"} },
	} {
		t.Run(name, func(t *testing.T) {
			data := tinyWithMap(t, spJSON(t), edit)
			if _, err := ParseHFTokenizer("x", data); err == nil || !strings.Contains(err.Error(), "unsupported") {
				t.Errorf("err = %v, want an unsupported error", err)
			}
		})
	}
}

// spJSON is spTokenizer's file, decoded.
func spJSON(t testing.TB) map[string]any {
	var captured map[string]any
	spTokenizer(t, func(m map[string]any) { captured = m })
	data, _ := json.Marshal(captured)
	var m map[string]any
	json.Unmarshal(data, &m)
	return m
}

func tinyWithMap(t testing.TB, m map[string]any, edit func(map[string]any)) []byte {
	edit(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestEmptyTextIsNoTokens: no pre-tokenizer may make something of nothing
// (ByteLevel's add_prefix_space once made "" one token).
func TestEmptyTextIsNoTokens(t *testing.T) {
	prefixSpace := func(m map[string]any) {
		m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}
	}
	noAdded := func(m map[string]any) { prefixSpace(m); m["added_tokens"] = []any{} }
	for name, data := range map[string][]byte{
		"add_prefix_space":                  tinyWith(t, prefixSpace), // has added tokens
		"add_prefix_space, no added tokens": tinyWith(t, noAdded),
	} {
		tok, err := ParseHFTokenizer(name, data)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Count(""); got != 0 {
			t.Errorf("%s: Count(\"\") = %d", name, got)
		}
	}
	metaspace := spTokenizer(t, func(m map[string]any) {
		m["normalizer"] = nil
		m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}
	})
	if got := metaspace.Count(""); got != 0 {
		t.Errorf("Metaspace: Count(\"\") = %d", got)
	}
}

// TestLlamaCppMatchesLongestTokenFirst: where two added tokens overlap,
// the tokenizers library takes the leftmost, llama.cpp the longest.
func TestLlamaCppMatchesLongestTokenFirst(t *testing.T) {
	tok := spTokenizer(t, func(m map[string]any) {
		m["normalizer"] = nil
		m["added_tokens"] = []any{
			map[string]any{"id": 300, "content": "ab", "special": true},
			map[string]any{"id": 301, "content": "bcc", "special": true},
			map[string]any{"id": 302, "content": "a", "special": true},
		}
	})
	x := fmt.Sprint(10 + 'x') // <0x78>: x is not in the vocabulary
	for _, c := range []struct {
		text         string
		hf, llamaCpp string
	}{
		{"abcc", "[300 5 5]", "[302 301]"},           // ab, c, c; a, bcc
		{"abccab", "[300 5 5 300]", "[302 301 300]"}, // the trailing ab either way
		{"aab", "[302 300]", "[302 300]"},            // no overlap: a, ab
		{"abab", "[300 300]", "[300 300]"},           // one token, left to right
		{"xbccab", "[" + x + " 301 300]", "[" + x + " 301 300]"},
	} {
		if got := fmt.Sprint(tok.ids(c.text)); got != c.hf {
			t.Errorf("HF ids(%q) = %s, want %s", c.text, got, c.hf)
		}
		if got := fmt.Sprint(tok.LlamaCpp().ids(c.text)); got != c.llamaCpp {
			t.Errorf("llama.cpp ids(%q) = %s, want %s", c.text, got, c.llamaCpp)
		}
	}
}

// TestHFLongPieceIsNotQuadratic counts a megabyte that is one piece with a
// vocabulary of runs of a (a, aa, aaaa, ... 2^10 a): the heap merge is
// O(n log n); a rescan per merge would take minutes.
func TestHFLongPieceIsNotQuadratic(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	tok := spTokenizer(t, func(m map[string]any) {
		vocab := model(m)["vocab"].(map[string]any)
		merges := []any{}
		for k, run := 0, "a"; k < 10; k++ {
			vocab[run+run] = 300 + k
			merges = append(merges, []any{run, run})
			run += run
		}
		model(m)["merges"] = merges
		m["normalizer"] = nil
	})
	text := strings.Repeat("a", 1<<20)
	if got, want := tok.Count(text), 1<<10; got != want {
		t.Errorf("Count = %d, want %d (runs of 1024)", got, want)
	}
}
