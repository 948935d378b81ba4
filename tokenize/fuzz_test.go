package tokenize

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// FuzzCountMatchesReference compares the engine with tiktoken-go on
// arbitrary bytes, seeded with the fixture texts. Texts with code points
// that Unicode 15.1 or 16.0 added to a class are skipped: there tiktoken-go
// (regexp2 on Go's Unicode 15.0 tables) differs from tiktoken, which the
// fixtures show custody follows.

func FuzzCountMatchesReference(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		if len(fx.Text) <= 1024 {
			f.Add(fx.Text)
		}
	}
	f.Add("\xff\xfe\xe2\x82 x\xed\xa0\x80")
	encs := make([]*Encoding, len(encodingNames))
	for i, name := range encodingNames {
		encs[i] = mustEncoding(f, name)
		reference(f, name)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1024 {
			return // tiktoken-go is quadratic; keep each run (and minimization) quick
		}
		if newerThanGo(text) {
			return // tiktoken-go is on Go's Unicode 15.0; the fixtures cover these
		}
		for _, e := range encs {
			if got, want := e.Count(text), len(reference(t, e.name).EncodeOrdinary(text)); got != want {
				t.Fatalf("%s: Count(%q) = %d, tiktoken-go %d\n%s", e.name, text, got, want, describe(t, e, text))
			}
		}
	})
}

// FuzzParseHFTokenizer feeds arbitrary bytes to the tokenizer.json parser
// (seeded with the testdata tokenizer and variants of it), and arbitrary
// text to what it parses: it must return an error or a counter that counts
// without panicking, as many tokens as it has ids.
func FuzzParseHFTokenizer(f *testing.F) {
	seed, err := os.ReadFile(tinyTokenizer)
	if err != nil {
		f.Fatal(err)
	}
	const text = "the cat's 1234   x\n\n<|begin_of_text|> héllo 中文 😀\xff"
	f.Add(seed, text)
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{},"merges":[]},"pre_tokenizer":{"type":"ByteLevel"}}`), "x")
	f.Add([]byte(strings.Replace(string(seed), `"ignore_merges": true`, `"ignore_merges": false`, 1)), text)
	f.Add([]byte(strings.Replace(string(seed), `\\p{N}{1,3}`, `\\p{N}+`, 1)), text)
	f.Add([]byte(strings.Replace(string(seed), `"Sequence"`, `"ByteLevel"`, 1)), text)
	f.Add([]byte(strings.Replace(string(seed), `"lstrip": false`, `"lstrip": true`, 1)), " <|begin_of_text|> ")
	sp, err := json.Marshal(spJSON(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sp, "a b <s>é\xff")
	f.Add([]byte(strings.Replace(string(sp), `"byte_fallback":true`, `"byte_fallback":false`, 1)), "ab é")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := ParseHFTokenizer("fuzz", data)
		if err != nil {
			return
		}
		// No upper bound: a Replace normalizer may lengthen the text.
		if n := tok.Count(text); n < 0 || n != len(tok.ids(text)) {
			t.Fatalf("Count(%q) = %d, %d ids", text, n, len(tok.ids(text)))
		}
	})
}

// newerThanGo reports whether s has a rune classified differently by
// Go's unicode package than by the Unicode 16.0 table.
func newerThanGo(s string) bool {
	for _, r := range s {
		if runeClass(r) != goClass(r) {
			return true
		}
	}
	return false
}

// FuzzSentencePiece counts arbitrary text with the tiny SentencePiece-style
// tokenizer in each of its modes (byte_fallback, unk, fused unk, Metaspace,
// Split, llama.cpp variants): no panic, the count is the number of ids, and every id is in the
// vocabulary.
func FuzzSentencePiece(f *testing.F) {
	for _, s := range []string{"", "a b", "ab ba", "é<s>  c", "<s>", "\xff\xfe", " \u2581 ", "a\u0301\u0323 b", "\U0001F600ab"} {
		f.Add(s)
	}
	noFallback := func(m map[string]any) { model(m)["byte_fallback"] = false }
	toks := []*HFTokenizer{
		spTokenizer(f, nil),
		spTokenizer(f, noFallback),
		spTokenizer(f, func(m map[string]any) { noFallback(m); model(m)["fuse_unk"] = false }),
		spTokenizer(f, func(m map[string]any) { noFallback(m); delete(model(m), "unk_token") }),
		spTokenizer(f, func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "NFKC"}
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"}
		}),
		spTokenizer(f, func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\p{L}+|b`}, "behavior": "MergedWithNext"}
		}),
	}
	toks = append(toks, toks[0].LlamaCpp(), toks[4].LlamaCpp()) // longest-first added tokens, no NFKC
	f.Fuzz(func(t *testing.T, text string) {
		for i, tok := range toks {
			ids := tok.ids(text)
			if n := tok.Count(text); n != len(ids) || n < 0 {
				t.Fatalf("tokenizer %d: Count(%q) = %d, %d ids", i, text, n, len(ids))
			}
			for _, id := range ids {
				if id < 0 || id >= 10+256 {
					t.Fatalf("tokenizer %d: id %d out of the vocabulary in %v", i, id, ids)
				}
			}
		}
	})
}

// FuzzUnicodeNorm checks the normalizers on arbitrary text: they agree
// with x/text wherever x/text adds no U+034F, are idempotent, and add no
// U+034F of their own.
func FuzzUnicodeNorm(f *testing.F) {
	f.Add("e\u0301\u0323")
	f.Add("Z" + strings.Repeat("\u0301\u0323\u0334", 20) + "\u1100\u1161\u11a8")
	f.Add("\ufb01" + strings.Repeat("\u0307", 40))
	f.Fuzz(func(t *testing.T, text string) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		for name, form := range normalForms {
			u := unicodeNorm{form}
			got := u.normalize(text)
			if x := form.String(text); strings.Count(x, cgj) == strings.Count(text, cgj) && got != x {
				t.Fatalf("%s(%+q) = %+q, x/text %+q", name, text, got, x)
			}
			if strings.Count(got, cgj) > strings.Count(text, cgj) {
				t.Fatalf("%s(%+q) = %+q adds a CGJ", name, text, got)
			}
			if again := u.normalize(got); again != got {
				t.Fatalf("%s not idempotent on %+q: %+q then %+q", name, text, got, again)
			}
		}
	})
}

// FuzzDeepSeekSplit compares the hand-written DeepSeek-V3 splitters with
// regexp2 on arbitrary text.
func FuzzDeepSeekSplit(f *testing.F) {
	for _, s := range []string{".Hello", "'é 1abc", " ...\r\n\n", "日本語のテキスト", "Z\u0334\u0322a  \n\t x", "\U00010D40\U0001CC00 x"} {
		f.Add(s)
	}
	type pair struct {
		native gapPattern
		re     *regexSplitter
	}
	var pairs []pair
	for expr, gp := range deepSeekPatterns {
		re, err := newRegexSplitter(expr, isolated)
		if err != nil {
			f.Fatal(err)
		}
		pairs = append(pairs, pair{gp, re})
	}
	f.Fuzz(func(t *testing.T, text string) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		for _, p := range pairs {
			var got, want []string
			p.native.split(text, func(s string) { got = append(got, s) })
			p.re.split(text, func(s string) { want = append(want, s) })
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("pattern %d on %+q:\nnative  %+q\nregexp2 %+q", p.native, text, got, want)
			}
		}
	})
}
