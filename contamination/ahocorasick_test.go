package contamination

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAutomatonMatchesNaive compares the automaton with bytes.Contains on
// random patterns over a small alphabet (many overlaps, suffixes, prefixes).
func TestAutomatonMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab c"[r.IntN(4)]
		}
		return b
	}
	for range 500 {
		var pats []pattern
		for i := range 1 + r.IntN(6) {
			p := bytes.TrimSpace(word(1 + r.IntN(5)))
			if len(p) == 0 {
				continue
			}
			pats = append(pats, pattern{norm: p, label: string(rune('A' + i))})
		}
		// Deduplicate as rebuildLocked does.
		slices.SortFunc(pats, func(a, b pattern) int { return bytes.Compare(a.norm, b.norm) })
		pats = slices.CompactFunc(pats, func(a, b pattern) bool { return bytes.Equal(a.norm, b.norm) })
		a := buildAutomaton(pats)
		text := word(r.IntN(30))
		got := a.all(string(text))
		slices.Sort(got)
		var want []int32
		norm := normalizeString(string(text))
		for id, p := range pats {
			if bytes.Contains(norm, p.norm) {
				want = append(want, int32(id))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("patterns %q text %q: got %v want %v", pats, text, got, want)
		}
	}
}

func TestAutomatonEmpty(t *testing.T) {
	a := buildAutomaton(nil)
	if got := a.all("anything at all"); len(got) != 0 {
		t.Errorf("empty automaton matched %v", got)
	}
}

func TestAutomatonAllBytes(t *testing.T) {
	// 256 distinct bytes leave no byte for class 0.
	var p []byte
	for b := range 256 {
		p = append(p, byte(b))
	}
	a := buildAutomaton([]pattern{{norm: p, label: "all"}})
	if a.nclass != 257 {
		t.Errorf("%d classes", a.nclass)
	}
}
