package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

const tinyTokenizer = "testdata/tiny-llama3.tokenizer.json"

// tinyWith returns the tiny tokenizer.json with edit applied to its
// decoded JSON.
func tinyWith(t testing.TB, edit func(m map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile(tinyTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func model(m map[string]any) map[string]any { return m["model"].(map[string]any) }

// The tiny vocabulary is the 256 byte symbols plus the merges, by rank:
// 0 "h e", 1 "Ġ t", 2 "Ġt he", 3 "i n", 4 "in g", 5 "Ġ Ġ", 6 "1 2",
// 7 "e r", 8 "Ġ c", 9 "a t", 10 "Ġc at", 11 "' s"; and "Ġcats", which no
// merge makes, so only ignore_merges finds it.
func TestHFTokenizerCountsTiny(t *testing.T) {
	tok, err := LoadHFTokenizer(tinyTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.Name(), "file:"+tinyTokenizer; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	cases := []struct {
		name, text string
		want       int
	}{
		{"empty", "", 0},
		{"one byte", "x", 1},
		// "the": t+he (rank 0), and no merge for (t, he).
		{"the", "the", 2},
		// " the": h+e first (rank 0), then Ġ+t (1), then Ġt+he (2).
		{"space the", " the", 1},
		// " cat": Ġ+c (8), a+t (9), Ġc+at (10).
		{"the cat", "the cat", 3},
		// "singing": leftmost i+n first, then the second i+n (3) before
		// either in+g (4): s, ing, ing.
		{"singing", "singing", 3},
		// \p{N}{1,3}: "123" is 12+3, "4" alone.
		{"digits", "1234", 3},
		// the contraction is its own piece: i, t, 's.
		{"contraction", "it's", 3},
		// \s+(?!\S) leaves the last space to " x": ĠĠ, then Ġ x.
		{"spaces", "   x", 3},
		// ignore_merges: " cats" is in the vocabulary whole.
		{"ignore merges", " cats", 1},
		// é is two bytes with no merges.
		{"multibyte", "héllo", 6},
		// an added token in the text is one token, and cuts the text.
		{"added token", "<|begin_of_text|>", 1},
		{"added token inside text", "x<|begin_of_text|>the", 1 + 1 + 2},
		{"added token twice", "<|begin_of_text|><|begin_of_text|>", 2},
		{"partial added token", "<|begin_of_tex", 2 + 4 + 3 + 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tok.Count(c.text); got != c.want {
				t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
			}
		})
	}
}

// TestHFTokenizerAddedTokenFlags: the flags of an added token change what
// it absorbs. Ordinary "<|begin_of_text|>" is 16 tokens: "<|" (2), "begin"
// (b, e, g, in), "_of" (3), "_text" (5), "|>" (2).
func TestHFTokenizerAddedTokenFlags(t *testing.T) {
	cases := []struct {
		name string
		flag string
		text string
		want int
	}{
		{"plain", "", " <|begin_of_text|> x", 1 + 1 + 2},        // Ġ, token, Ġ x
		{"lstrip", "lstrip", " <|begin_of_text|> x", 1 + 2},     // token eats the space before
		{"rstrip", "rstrip", " <|begin_of_text|> x", 1 + 1 + 1}, // token eats the space after
		{"single word alone", "single_word", "<|begin_of_text|> x", 1 + 2},
		{"single word in a word", "single_word", "a<|begin_of_text|>", 1 + 16},
		{"normalized", "normalized", "<|begin_of_text|>", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := tinyWith(t, func(m map[string]any) {
				if c.flag != "" {
					m["added_tokens"].([]any)[0].(map[string]any)[c.flag] = true
				}
			})
			tok, err := ParseHFTokenizer("x", data)
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Count(c.text); got != c.want {
				t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
			}
		})
	}
}

func TestHFTokenizerIgnoreMergesOff(t *testing.T) {
	data := tinyWith(t, func(m map[string]any) { model(m)["ignore_merges"] = false })
	tok, err := ParseHFTokenizer("tiny", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Count(" cats"); got != 2 { // Ġcat + s
		t.Errorf(`Count(" cats") = %d, want 2`, got)
	}
}

func TestHFTokenizerNormalizer(t *testing.T) {
	const decomposed = "e\u0301" // e, then a combining acute: 1 + 2 bytes
	cases := []struct {
		name       string
		normalizer any
		want       int
	}{
		{"none", nil, 3},
		{"NFC", map[string]any{"type": "NFC"}, 2}, // é: 2 bytes
		{"sequence", map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFC"}}}, 2},
		{"NFD", map[string]any{"type": "NFD"}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, err := ParseHFTokenizer("x", tinyWith(t, func(m map[string]any) { m["normalizer"] = c.normalizer }))
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Count(decomposed); got != c.want {
				t.Errorf("Count = %d, want %d", got, c.want)
			}
		})
	}
}

func TestHFTokenizerMergesAsPairs(t *testing.T) {
	data := tinyWith(t, func(m map[string]any) {
		var pairs [][]string
		for _, s := range model(m)["merges"].([]any) {
			a, b, _ := strings.Cut(s.(string), " ")
			pairs = append(pairs, []string{a, b})
		}
		model(m)["merges"] = pairs
	})
	tok, err := ParseHFTokenizer("tiny", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Count("the cat"); got != 3 {
		t.Errorf(`Count("the cat") = %d, want 3`, got)
	}
}

func TestHFTokenizerByteLevelRegex(t *testing.T) {
	// GPT-2 style: ByteLevel alone splits with its own regex, and
	// add_prefix_space makes "the" into " the".
	data := tinyWith(t, func(m map[string]any) {
		m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}
	})
	tok, err := ParseHFTokenizer("gpt2ish", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want int
	}{{"the", 1}, {"the the", 2}, {"1234", 4}} { // " 1234" is one piece: Ġ, 12, 3, 4
		if got := tok.Count(c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestHFTokenizerRefusesUnsupported(t *testing.T) {
	cases := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"wordpiece", func(m map[string]any) { model(m)["type"] = "WordPiece" }},
		{"unigram", func(m map[string]any) { model(m)["type"] = "Unigram" }},
		{"byte fallback", func(m map[string]any) { model(m)["byte_fallback"] = true }},
		{"dropout", func(m map[string]any) { model(m)["dropout"] = 0.1 }},
		{"subword prefix", func(m map[string]any) { model(m)["continuing_subword_prefix"] = "##" }},
		{"normalizer", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Lowercase"} }},
		{"normalizer in sequence", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "NFC"}, map[string]any{"type": "Strip"}}}
		}},
		{"metaspace then byte level", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "ByteLevel", "use_regex": false},
				map[string]any{"type": "Metaspace", "replacement": "▁"}}}
		}},
		{"split contiguous", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\s+`}, "behavior": "Contiguous"},
				map[string]any{"type": "ByteLevel", "use_regex": false}}}
		}},
		{"missing byte symbol", func(m map[string]any) { delete(model(m)["vocab"].(map[string]any), "Ġ") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHFTokenizer("x", tinyWith(t, c.edit))
			if !errors.Is(err, ErrUnsupportedTokenizer) {
				t.Fatalf("err = %v, want ErrUnsupportedTokenizer", err)
			}
		})
	}
}

func TestHFTokenizerRejectsMalformed(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"not json", []byte("{")},
		{"merge of unknown token", tinyWith(t, func(m map[string]any) {
			model(m)["merges"] = []any{"zz q"}
		})},
		{"merge with three parts", tinyWith(t, func(m map[string]any) {
			model(m)["merges"] = []any{"a b c"}
		})},
		{"bad regex", tinyWith(t, func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `(`}, "behavior": "Isolated"},
				map[string]any{"type": "ByteLevel", "use_regex": false}}}
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseHFTokenizer("x", c.data); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := Lookup("file:" + filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Lookup of a missing file: no error")
	}
}

// TestRegexFallbackMatchesNative checks the regexp2 path against the
// native splitters on random text, with the patterns spelled so that they
// are not recognised as native (an extra non-capturing group).
func TestRegexFallbackMatchesNative(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for expr, nat := range nativePatterns {
		if strings.Contains(expr, "?+") {
			continue // possessive quantifiers: regexp2 has none
		}
		re, err := newRegexSplitter("(?:"+expr+")", isolated)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ {
			text := strings.ToValidUTF8(randomText(r, 1+r.IntN(30)), "\uFFFD")
			var got, want []string
			re.split(text, func(p string) { got = append(got, p) })
			nat.split(text, func(p string) { want = append(want, p) })
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("pattern %d on %q:\nregexp2 %q\nnative  %q", nat, text, got, want)
			}
		}
	}
}

// TestHFTokenizerFromCL100kMatchesTiktoken converts cl100k_base into a
// tokenizer.json the way Hugging Face's converter does (each token's merge
// is the two parts BPE leaves when only lower ranks may merge) and checks
// that the HF engine counts the fixtures as tiktoken does.
func TestHFTokenizerFromCL100kMatchesTiktoken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100k merges")
	}
	tok := cl100kAsHF(t)
	for _, f := range loadFixtures(t) {
		if got := tok.Count(f.Text); got != f.CL100k {
			t.Errorf("Count(%.60q) = %d, tiktoken %d", f.Text, got, f.CL100k)
		}
	}
}

// splitBelow is tiktoken's byte_pair_merge restricted to ranks below max.
func splitBelow(t *rankTable, piece string, max uint32) []string {
	starts := make([]int, len(piece)+1)
	for i := range starts {
		starts[i] = i
	}
	for {
		best, at := max, -1
		for k := 0; k+2 < len(starts); k++ {
			if r := t.rank(piece[starts[k]:starts[k+2]]); r < best {
				best, at = r, k
			}
		}
		if at < 0 {
			break
		}
		starts = append(starts[:at+1], starts[at+2:]...)
	}
	out := make([]string, len(starts)-1)
	for i := range out {
		out[i] = piece[starts[i]:starts[i+1]]
	}
	return out
}

// cl100kAsHF converts cl100k_base to a Llama-3-style tokenizer.json the
// way Hugging Face's converter does.
func cl100kAsHF(t testing.TB) *HFTokenizer {
	t.Helper()
	ranks := mustEncoding(t, "cl100k_base").ranks
	runes := byteLevelRunes()
	bl := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteRune(runes[s[i]])
		}
		return b.String()
	}
	type merge struct {
		rank uint32
		a, b string
	}
	var merges []merge
	vocab := make(map[string]any, ranks.count)
	ranks.each(func(tok string, rank uint32) {
		vocab[bl(tok)] = rank
		if len(tok) < 2 {
			return
		}
		parts := splitBelow(ranks, tok, rank)
		if len(parts) != 2 {
			t.Fatalf("token %q splits into %d parts", tok, len(parts))
		}
		merges = append(merges, merge{rank, bl(parts[0]), bl(parts[1])})
	})
	sort.Slice(merges, func(i, j int) bool { return merges[i].rank < merges[j].rank })
	ms := make([]string, len(merges))
	for i, m := range merges {
		ms[i] = m.a + " " + m.b
	}
	data := tinyWith(t, func(m map[string]any) {
		model(m)["vocab"] = vocab
		model(m)["merges"] = ms
	})
	tok, err := ParseHFTokenizer("cl100k-as-hf", data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestHFTokenizerConcurrent counts from several goroutines, on the native
// and the regexp2 paths, and expects the serial counts (run with -race).
func TestHFTokenizerConcurrent(t *testing.T) {
	native, err := LoadHFTokenizer(tinyTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	regex, err := ParseHFTokenizer("gpt2ish", tinyWith(t, func(m map[string]any) {
		m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}
	}))
	if err != nil {
		t.Fatal(err)
	}
	sp := spTokenizer(t, nil)
	texts := []string{"the cat <|begin_of_text|> singing 1234", strings.Repeat("it's the cat ", 50), "héllo 中文 😀", "ab<s> ba a"}
	// The variants share their scratch pool with the tokenizer.
	for _, tok := range []*HFTokenizer{native, regex, sp, sp.LlamaCpp(), native.LlamaCpp()} {
		want := make([]int, len(texts))
		for i, s := range texts {
			want[i] = tok.Count(s)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 4*len(texts))
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, s := range texts {
					if got := tok.Count(s); got != want[i] {
						errs <- fmt.Sprintf("%s: Count(%.30q) = %d, serially %d", tok.Name(), s, got, want[i])
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Error(msg)
		}
	}
}
