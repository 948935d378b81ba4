package tokenize

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
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

// TestCountMatchesReferenceOnLongText runs longer texts, whose pieces
// reach the heap merge, and checks that concurrent counting is safe.
func TestCountMatchesReferenceOnLongText(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, name := range encodingNames {
		t.Run(name, func(t *testing.T) {
			e, ref := mustEncoding(t, name), reference(t, name)
			r := rand.New(rand.NewPCG(2, uint64(len(name))))
			texts := make([]string, 40)
			want := make([]int, len(texts))
			for i := range texts {
				texts[i] = randomText(r, 200+r.IntN(800)) + strings.Repeat(alphabet[r.IntN(len(alphabet))], r.IntN(300))
				want[i] = len(ref.EncodeOrdinary(texts[i]))
			}
			var wg sync.WaitGroup
			errs := make(chan string, len(texts))
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i, text := range texts {
						if got := e.Count(text); got != want[i] {
							errs <- fmt.Sprintf("Count(%.60q...) = %d, tiktoken-go %d", text, got, want[i])
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for msg := range errs {
				t.Error(msg)
			}
		})
	}
}
