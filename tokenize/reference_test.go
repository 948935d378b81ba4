package tokenize

import (
	"strings"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The reference: tiktoken-go, the regexp2-based port that custody counted
// with before. It is only a test dependency now.
var (
	refOnce sync.Once
	refEncs map[string]*tiktoken.Tiktoken
	refErr  error
)

func reference(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	refOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		refEncs = map[string]*tiktoken.Tiktoken{}
		for _, n := range encodingNames {
			e, err := tiktoken.GetEncoding(n)
			if err != nil {
				refErr = err
				return
			}
			refEncs[n] = e
		}
	})
	if refErr != nil {
		t.Fatalf("loading tiktoken-go: %v", refErr)
	}
	return refEncs[name]
}

var encodingNames = []string{"o200k_base", "cl100k_base"}

func mustEncoding(t testing.TB, name string) *Encoding {
	t.Helper()
	e, err := NewEncoding(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// pieces splits text with e's pre-tokenizer: a debugging helper.
func (e *Encoding) pieces(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		j := e.pattern.next(text, i)
		out = append(out, text[i:j])
		i = j
	}
	return out
}

// refPieces splits text with tiktoken-go's regex.
func refPieces(t testing.TB, name, text string) []string {
	ref := reference(t, name)
	var out []string
	for _, id := range ref.EncodeOrdinary(text) {
		out = append(out, ref.Decode([]int{id}))
	}
	return out
}

func describe(t testing.TB, e *Encoding, text string) string {
	return "ours pieces: " + strings.Join(quoteAll(e.pieces(text)), " ") +
		"\nreference tokens: " + strings.Join(quoteAll(refPieces(t, e.name, text)), " ")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(strconvQuote(s), " ", "·")
	}
	return out
}
