package contamination

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// winnowNaive is the definition: the rightmost minimum of every window,
// recorded when the selected position changes.
func winnowNaive(h []uint64, w int) []uint64 {
	if len(h) == 0 {
		return nil
	}
	w = min(w, len(h))
	var out []uint64
	last := -1
	for s := 0; s+w <= len(h); s++ {
		j := s
		for i := s; i < s+w; i++ {
			if h[i] <= h[j] {
				j = i
			}
		}
		if j != last {
			out = append(out, h[j])
			last = j
		}
	}
	return out
}

func TestWinnow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n, w := r.IntN(40), 1+r.IntN(6)
		h := make([]uint64, n)
		for i := range h {
			h[i] = uint64(r.IntN(8)) // many ties
		}
		got := winnow(h, w)
		if want := winnowNaive(h, w); !slices.Equal(got, want) {
			t.Fatalf("winnow(%v, %d) = %v, want %v", h, w, got, want)
		}
	}
}

// TestWinnowGuarantee: every Window consecutive k-grams of a prompt hold a
// fingerprint, which the run rule relies on.
func TestWinnowGuarantee(t *testing.T) {
	d := New(Config{})
	c := newCorpus(t, 5, 0.25)
	for range 200 {
		p := c.paragraph(6)
		pr := d.Fingerprint(p)
		n := newNormalizer(d.k0, d.k1)
		var words []uint64
		n.feed([]byte(p), &words, nil)
		n.finish(&words, nil)
		for i := 0; i+d.cfg.K+d.cfg.Window-1 <= len(words); i++ {
			ok := false
			for j := i; j < i+d.cfg.Window; j++ {
				if _, in := slices.BinarySearch(pr.sel, gram(words[j:j+d.cfg.K])); in {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("window at %d has no fingerprint", i)
			}
		}
	}
}

func TestFingerprint(t *testing.T) {
	d := New(Config{})
	for _, c := range []struct {
		name          string
		prompt        string
		wantAll       int
		wantSelAtMost int
	}{
		{"empty", "", 0, 0},
		{"shorter than K", "one two three", 0, 0},
		{"exactly K", "one two three four", 1, 1},
		{"punctuation only", "!!! ... ???", 0, 0},
		{"repeated text dedups", strings.Repeat("la la la la ", 50), 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := d.Fingerprint(c.prompt)
			if len(p.all) != c.wantAll || p.Len() > c.wantSelAtMost {
				t.Errorf("all %d sel %d, want %d and at most %d", len(p.all), p.Len(), c.wantAll, c.wantSelAtMost)
			}
		})
	}
	// Keyed: another Detector gives other fingerprints for the same text.
	p1 := d.Fingerprint("the quick brown fox jumps over the lazy dog")
	p2 := New(Config{}).Fingerprint("the quick brown fox jumps over the lazy dog")
	if slices.Equal(p1.all, p2.all) {
		t.Error("two Detectors share a key")
	}
	if !slices.Equal(p1.all, d.Fingerprint("The QUICK brown fox -- jumps over the lazy dog!").all) {
		t.Error("normalisation does not make case and punctuation irrelevant")
	}
	var nilPrints *Prints
	if nilPrints.Len() != 0 || nilPrints.has(1) {
		t.Error("nil Prints is not empty")
	}
}

func TestCapBlocks(t *testing.T) {
	sel := make([]uint64, 1000)
	for i := range sel {
		sel[i] = uint64(i)
	}
	got := capBlocks(sel, 256)
	if len(got) != 256 {
		t.Fatalf("kept %d, want 256", len(got))
	}
	// Four blocks of 64 consecutive, spread over the whole prompt.
	for b := 0; b < 4; b++ {
		blk := got[b*64 : (b+1)*64]
		for i := 1; i < len(blk); i++ {
			if blk[i] != blk[i-1]+1 {
				t.Fatalf("block %d not contiguous", b)
			}
		}
	}
	if got[0] != 0 || got[255] < 700 {
		t.Errorf("blocks do not span the prompt: first %d last %d", got[0], got[255])
	}
	if len(capBlocks(sel[:10], 256)) != 10 {
		t.Error("short prompt capped")
	}
	if len(capBlocks(sel, 10)) != 10 {
		t.Error("cap below one block")
	}
}

func TestLongPromptCapped(t *testing.T) {
	d := New(Config{Warmup: -1, MaxPrintsPerPrompt: 512})
	c := newCorpus(t, 9, 0.25)
	long := c.paragraph(400)
	p := d.Fingerprint(long)
	if p.Len() > 512 {
		t.Fatalf("kept %d fingerprints, cap 512", p.Len())
	}
	d.Remember("long", "t", p)
	if _, n := d.Remembered(); n != p.Len() {
		t.Errorf("remembered %d", n)
	}
}

// TestFingerprintAcrossPieces: Fingerprint feeds a long prompt in pieces
// of fingerprintPiece bytes, and its prints are those of the whole text
// normalised at once, whatever a piece's boundary cuts (a word, a
// multi-byte rune).
func TestFingerprintAcrossPieces(t *testing.T) {
	d := New(Config{MaxPrintsPerPrompt: 1 << 20})
	for shift := range 4 {
		prompt := strings.Repeat("x", shift) + strings.Repeat("Größe 東京 naïve café k9XbQ2mZ7w the quick brown fox ", 60)
		if len(prompt) < 4*fingerprintPiece {
			t.Fatalf("prompt of %d bytes: too short to cross pieces", len(prompt))
		}
		n := newNormalizer(d.k0, d.k1)
		var words []uint64
		n.feed([]byte(prompt), &words, nil)
		n.finish(&words, nil)
		want := d.printsOf(words)
		got := d.Fingerprint(prompt)
		if !slices.Equal(got.all, want.all) || !slices.Equal(got.sel, want.sel) {
			t.Fatalf("shift %d: %d/%d prints in pieces, %d/%d whole", shift, len(got.all), got.Len(), len(want.all), want.Len())
		}
	}
}
