package tokenize

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func strconvQuote(s string) string { return strconv.Quote(s) }

// alphabet mixes every class the patterns distinguish: ASCII letters of
// both cases, apostrophes and contraction letters, digits, spaces, tabs,
// newlines, slashes, punctuation, Latin-1 letters, marks, titlecase,
// modifier letters, CJK, Arabic, non-ASCII digits and spaces, emoji, the
// long s, and invalid bytes.
var alphabet = []string{
	"a", "b", "s", "t", "e", "l", "m", "d", "r", "v", "A", "S", "T", "L", "D",
	"'", "'", "0", "1", "9", " ", " ", " ", "\t", "\n", "\r", "/", ".", ",", "{", "\"", "-",
	"é", "É", "ß", "\u0301", "\u0308", "ǅ", "ʰ", "中", "文", "ا", "ل", "٣", "²", "Ⅻ",
	"\u00a0", "\u3000", "\u2028", "\u0085", "😀", "👍🏽", "ſ", "K", "\xff", "\xe2\x82", "\x00",
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestCountMatchesReferenceOnRandomText(t *testing.T) {
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for _, name := range encodingNames {
		t.Run(name, func(t *testing.T) {
			e, ref := mustEncoding(t, name), reference(t, name)
			r := rand.New(rand.NewPCG(1, uint64(len(name))))
			for i := 0; i < rounds; i++ {
				text := randomText(r, 1+r.IntN(40))
				if got, want := e.Count(text), len(ref.EncodeOrdinary(text)); got != want {
					t.Fatalf("Count(%q) = %d, tiktoken-go %d\n%s", text, got, want, describe(t, e, text))
				}
			}
		})
	}
}
