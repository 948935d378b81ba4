package tokenize

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// naiveCount is tiktoken's byte_pair_merge written plainly, with no
// length limit: the oracle for both merge paths.
func naiveCount(t *rankTable, piece string) int {
	starts := make([]int, len(piece)+1)
	for i := range starts {
		starts[i] = i
	}
	for len(starts) > 2 {
		best, at := uint32(noRank), -1
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
	return len(starts) - 1
}

// ids returns the token ids of text, by the pre-tokenizer and the plain
// merge: a debugging aid, and a stricter check than counts.
func (e *Encoding) ids(text string) []int {
	var out []int
	for _, piece := range e.pieces(replaceInvalid(text)) {
		starts := []int{0}
		for i := 1; i <= len(piece); i++ {
			starts = append(starts, i)
		}
		for len(starts) > 2 {
			best, at := uint32(noRank), -1
			for k := 0; k+2 < len(starts); k++ {
				if r := e.ranks.rank(piece[starts[k]:starts[k+2]]); r < best {
					best, at = r, k
				}
			}
			if at < 0 {
				break
			}
			starts = append(starts[:at+1], starts[at+2:]...)
		}
		for k := 0; k+1 < len(starts); k++ {
			out = append(out, int(e.ranks.rank(piece[starts[k]:starts[k+1]])))
		}
	}
	return out
}

// TestIDsMatchReference compares token ids, not only counts, with
// tiktoken-go on random valid text.
func TestIDsMatchReference(t *testing.T) {
	for _, name := range encodingNames {
		t.Run(name, func(t *testing.T) {
			e, ref := mustEncoding(t, name), reference(t, name)
			r := rand.New(rand.NewPCG(4, 4))
			for i := 0; i < 300; i++ {
				text := strings.ToValidUTF8(randomText(r, 1+r.IntN(40)), "")
				got, want := e.ids(text), ref.EncodeOrdinary(text)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("ids(%q) = %v, tiktoken-go %v", text, got, want)
				}
			}
		})
	}
}

func TestMergePathsAgree(t *testing.T) {
	pool := &sync.Pool{New: newHeapScratch}
	sources := []struct {
		name  string
		alpha []string
	}{
		{"letters", []string{"a", "b", "e", "r", "t", "n"}},
		{"one-letter", []string{"a"}},
		{"spaces", []string{" ", " ", "\t"}},
		{"digits-and-symbols", []string{"0", "1", "=", "-", "/", "*"}},
		{"multibyte", []string{"中", "文", "é", "😀", "\u0301"}},
	}
	for _, name := range encodingNames {
		e := mustEncoding(t, name)
		for _, src := range sources {
			t.Run(name+"/"+src.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(11, uint64(len(src.alpha))))
				for i := 0; i < 60; i++ {
					var b strings.Builder
					for b.Len() < 2+r.IntN(300) {
						b.WriteString(src.alpha[r.IntN(len(src.alpha))])
					}
					piece := b.String()
					want := naiveCount(e.ranks, piece)
					if got := e.ranks.heapCount(piece, pool.Get().(*heapScratch)); got != want {
						t.Fatalf("heapCount(%q) = %d, want %d", piece, got, want)
					}
					if len(piece) <= shortPiece {
						if got := e.ranks.scanCount(piece); got != want {
							t.Fatalf("scanCount(%q) = %d, want %d", piece, got, want)
						}
					}
				}
			})
		}
	}
}

// TestLongPiecesMatchReference runs whole texts whose pieces are far
// longer than shortPiece through both engines.
func TestLongPiecesMatchReference(t *testing.T) {
	cases := []struct{ name, text string }{
		{"repeated-letter", strings.Repeat("a", 3000)},
		{"repeated-pair", strings.Repeat("ab", 1000)},
		{"repeated-space", strings.Repeat(" ", 2000) + "x"},
		{"repeated-newline", strings.Repeat("\n", 2000)},
		{"repeated-symbol", strings.Repeat("=-", 900)},
		{"repeated-cjk", strings.Repeat("中文", 400)},
		{"repeated-emoji", strings.Repeat("😀", 300)},
		{"long-word", strings.Repeat("internationalization", 60)},
		{"digits", strings.Repeat("1234567890", 100)},
		{"invalid-bytes", strings.Repeat("\xff\xfe", 300)},
	}
	for _, name := range encodingNames {
		e, ref := mustEncoding(t, name), reference(t, name)
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				if got, want := e.Count(c.text), len(ref.EncodeOrdinary(c.text)); got != want {
					t.Fatalf("Count = %d, tiktoken-go %d", got, want)
				}
			})
		}
	}
}

// TestPathologicalInputIsNotQuadratic counts a megabyte that makes one
// piece; a quadratic merge would take minutes.
func TestPathologicalInputIsNotQuadratic(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	e := mustEncoding(t, "o200k_base")
	for _, text := range []string{strings.Repeat("a", 1<<20), strings.Repeat("\xff", 1<<19)} {
		if n := e.Count(text); n <= 0 || n > len(text) {
			t.Fatalf("Count = %d for %d bytes", n, len(text))
		}
	}
}
