package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/internal/fixtures"
)

// longWord is n bytes of lowercase letters with no space: one piece.
func longWord(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// TestLongPiecesAreBounded: a prompt of one unbroken word costs time
// linear in its length (it is counted in MaxPiece chunks), within
// ChunkSlack of the exact count, and CountUpTo stops at its limit.
func TestLongPiecesAreBounded(t *testing.T) {
	o, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	counters := map[string]Counter{"o200k_base": o}
	for _, fam := range []string{"llama3", "gemma3"} {
		hf, err := LoadHFTokenizer(fixtures.Tokenizer(t, fam) + "/tokenizer.json")
		if err != nil {
			t.Fatal(err)
		}
		counters[fam] = hf
	}
	word := longWord(1 << 20)
	for name, c := range counters {
		t.Run(name, func(t *testing.T) {
			// Under MaxPiece nothing is cut: the count is the exact one.
			short := word[:MaxPiece]
			if got, want := c.Count(short), c.Count(short[:MaxPiece/2])+c.Count(short[MaxPiece/2:]); absDiff(got, want) > 4 {
				t.Logf("two halves %d vs whole %d (boundary effects of one cut)", want, got)
			}
			// A piece of 4 chunks, counted whole (what an engine does) and
			// in chunks: within ChunkSlack.
			piece := word[:4*MaxPiece]
			if whole, chunked := unchunked(c, piece), c.Count(piece); absDiff(whole, chunked) > ChunkSlack(len(piece)) {
				t.Errorf("256 KiB word: %d tokens in chunks, %d whole: more than %d apart", chunked, whole, ChunkSlack(len(piece)))
			} else {
				t.Logf("256 KiB word: %d tokens in chunks, %d whole", chunked, whole)
			}
			start := time.Now()
			n := c.Count(word)
			took := time.Since(start)
			t.Logf("1 MiB word: %d tokens in %v", n, took)

			const limit = 131072
			start = time.Now()
			huge := strings.Repeat(word, 16)
			got, over := CountUpTo(c, huge, limit)
			if !over || got <= limit {
				t.Errorf("CountUpTo(16 MiB, %d) = %d, %v", limit, got, over)
			}
			// The limit is passed within the first MiB or so: far less
			// than counting 16 MiB (16 times took).
			if d := time.Since(start); d > 4*took {
				t.Errorf("CountUpTo took %v: it did not stop at the limit (a 4 MiB count took %v)", d, took)
			}
			if n, over := CountUpTo(c, "hello world", limit); over || n != c.Count("hello world") {
				t.Errorf("CountUpTo under the limit: %d %v", n, over)
			}
		})
	}
}

// unchunked counts one piece in one merge, as an engine does.
func unchunked(c Counter, piece string) int {
	switch c := c.(type) {
	case *Encoding:
		return c.pieceCount(piece)
	case *HFTokenizer:
		sc := c.scratch.Get().(*hfScratch)
		defer c.scratch.Put(sc)
		return c.model.count(piece, sc, nil)
	}
	panic("unknown counter")
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}

func TestEachChunk(t *testing.T) {
	text := strings.Repeat("é", MaxPiece) + strings.Repeat("word ", MaxPiece/5)
	var total int
	var chunks []string
	eachChunk(text, func(c string) bool { chunks = append(chunks, c); total += len(c); return true })
	if total != len(text) || strings.Join(chunks, "") != text {
		t.Fatalf("chunks do not add up to the text")
	}
	for i, c := range chunks {
		if len(c) > MaxPiece || !strings.HasPrefix(text[strings.Index(text, c):], c) {
			t.Errorf("chunk %d: %d bytes", i, len(c))
		}
		if !utf8ValidString(c) {
			t.Errorf("chunk %d cuts a character", i)
		}
	}
}

func utf8ValidString(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// TestCountUpToAgreesWithCount: under the limit CountUpTo is Count; over
// it, it says so with a count past the limit, whatever decided it (the
// prefix or the whole).
func TestCountUpToAgreesWithCount(t *testing.T) {
	o, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields("the quick brown fox jumps over the lazy dog 東京 🚀 naïve café x=1; if (a) { b(); }")
	for i := range 200 {
		var b strings.Builder
		for range r.IntN(3000) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString([]string{" ", "  ", "\n", ""}[r.IntN(4)])
		}
		text := b.String()
		exact := o.Count(text)
		limit := r.IntN(exact + 50)
		n, over := CountUpTo(o, text, limit)
		switch {
		case exact <= limit && (over || n != exact):
			t.Fatalf("case %d: %d tokens, limit %d: CountUpTo %d %v", i, exact, limit, n, over)
		case exact > limit && (!over || n <= limit):
			t.Fatalf("case %d: %d tokens, limit %d: CountUpTo %d %v", i, exact, limit, n, over)
		}
	}
}
