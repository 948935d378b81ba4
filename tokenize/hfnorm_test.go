package tokenize

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestUnicodeNormHasNoStreamSafeLimit: testdata/zalgo.json holds texts with
// runs of 70 to 90 combining marks and their four normal forms by
// JavaScript's String.prototype.normalize (ICU), which, like the Rust
// unicode-normalization crate the tokenizers library uses, reorders and
// composes runs of any length. x/text inserts a U+034F after every 30.
func TestUnicodeNormHasNoStreamSafeLimit(t *testing.T) {
	data, err := os.ReadFile("testdata/zalgo.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []map[string]string
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		for _, form := range []string{"NFC", "NFD", "NFKC", "NFKD"} {
			got := unicodeNorm{normalForms[form]}.normalize(c["text"])
			if got != c[form] {
				t.Errorf("case %d %s: got %+q, want %+q", i, form, got, c[form])
			}
			if normalForms[form].String(c["text"]) == c[form] {
				t.Errorf("case %d %s: x/text already agrees; the case tests nothing", i, form)
			}
		}
	}
	// Short runs take x/text's answer as it is.
	if s := "e\u0301\u0323 x"; (unicodeNorm{norm.NFC}).normalize(s) != norm.NFC.String(s) {
		t.Error("short run: not x/text's NFC")
	}
}

// TestQwen3CountsZalgoAsHF: Qwen3's NFC count of a Zalgo text is the count
// of its NFC form by JavaScript without any normalization.
func TestQwen3CountsZalgoAsHF(t *testing.T) {
	data, err := os.ReadFile("testdata/zalgo.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []map[string]string
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	tok := realTokenizer(t, "qwen3")
	raw := tok.LlamaCpp() // no normalizer
	for i, c := range cases {
		if got, want := tok.Count(c["text"]), raw.Count(c["NFC"]); got != want {
			t.Errorf("case %d: Count = %d, want %d (the NFC text's)", i, got, want)
		}
		if strings.Contains(c["NFC"], cgj) {
			t.Errorf("case %d: the expected NFC has a CGJ", i)
		}
	}
}
