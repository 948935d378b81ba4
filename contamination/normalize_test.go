package contamination

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"case and punctuation", "Hello,\n  WORLD!", "hello world"},
		{"leading separators", "  --x", "x"},
		{"digits are words", "order #A7F3-99 shipped", "order a7f3 99 shipped"},
		{"unicode lowercase", "ÀÉÎ Straße", "àéî straße"},
		{"combining marks stay in the word", "cafe\u0301s", "cafe\u0301s"},
		{"cjk runes are words", "東京abc", "東京abc"},
		{"invalid utf-8 separates", "ab\xffcd", "ab cd"},
		{"symbols separate", "a+b=c", "a b c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := string(normalizeString(c.in)); got != c.want {
				t.Errorf("normalize(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestNormalizeWords(t *testing.T) {
	n := newNormalizer(1, 2)
	var words []uint64
	n.feed([]byte("東京abc d"), &words, nil)
	n.finish(&words, nil)
	// 東, 京, abc, d: a CJK rune ends the word before it and is one itself.
	if len(words) != 4 {
		t.Fatalf("%d words, want 4", len(words))
	}
	if words[2] != sipSum(1, 2, []byte("abc"))&^1 || words[3] != sipSum(1, 2, []byte("d"))&^1 {
		t.Error("word hashes are not SipHash of the lowercased word")
	}
}

// TestNormalizeChunked: every cut of every seed, including cuts inside a
// UTF-8 sequence, gives the same words and bytes as the whole text.
func TestNormalizeChunked(t *testing.T) {
	for _, text := range seedTexts(t) {
		whole := normalizeAll([][]byte{text})
		for cut := 0; cut <= len(text); cut++ {
			got := normalizeAll([][]byte{text[:cut], text[cut:]})
			if !slices.Equal(got.words, whole.words) || string(got.out) != string(whole.out) {
				t.Fatalf("cut at %d of %q differs", cut, text)
			}
		}
		var bytes [][]byte
		for i := range text {
			bytes = append(bytes, text[i:i+1])
		}
		if got := normalizeAll(bytes); !slices.Equal(got.words, whole.words) || string(got.out) != string(whole.out) {
			t.Fatalf("byte by byte differs for %q", text)
		}
	}
}

type normalized struct {
	words []uint64
	out   []byte
}

func normalizeAll(chunks [][]byte) normalized {
	n := newNormalizer(7, 9)
	var r normalized
	for _, c := range chunks {
		n.feed(c, &r.words, &r.out)
	}
	n.finish(&r.words, &r.out)
	return r
}

func seedTexts(t testing.TB) [][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/seeds/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds: %v", err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestNonceWords(t *testing.T) {
	for _, c := range []struct {
		word  string
		nonce bool
	}{
		{"k9XbQ2mZ7w", true},
		{"q01x0001", true},
		{"3fa85f64", true},
		{"python311", false}, // one alternation: a version, not a nonce
		{"sha256sum", false},
		{"windows10", false},
		{"a1b2c3", false},       // too short
		{"deadbeefcafe", false}, // letters only
		{"12345678901", false},  // digits only
		{"k9é2mZ7wq1", false},   // not ASCII
	} {
		n := newNormalizer(1, 2)
		var words []uint64
		n.feed([]byte(c.word+" "), &words, nil)
		if len(words) != 1 || isNonceHash(words[0]) != c.nonce {
			t.Errorf("%q: nonce %v, want %v", c.word, len(words) == 1 && isNonceHash(words[0]), c.nonce)
		}
	}
}
