package tokenize

import (
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
// without panicking.
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
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := ParseHFTokenizer("fuzz", data)
		if err != nil {
			return
		}
		if n := tok.Count(text); n < 0 || n > 4*len(text)+1 {
			t.Fatalf("Count(%q) = %d", text, n)
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
