package contamination

import (
	"slices"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, s := range seedTexts(f) {
		f.Add(string(s), string(s[len(s)/2:]), uint(len(s)/3))
	}
}

// FuzzFingerprint: Fingerprint never panics, is deterministic, keeps a
// subset of the k-grams, and agrees with the normaliser fed in pieces.
func FuzzFingerprint(f *testing.F) {
	addSeeds(f)
	d := New(Config{MaxPrintsPerPrompt: 128})
	f.Fuzz(func(t *testing.T, prompt, _ string, cut uint) {
		p := d.Fingerprint(prompt)
		if q := d.Fingerprint(prompt); !slices.Equal(p.all, q.all) || !slices.Equal(p.sel, q.sel) {
			t.Fatal("not deterministic")
		}
		if p.Len() > 128 {
			t.Fatalf("%d fingerprints over the cap", p.Len())
		}
		for _, s := range p.sel {
			if !p.has(s) {
				t.Fatal("a fingerprint that is not a k-gram")
			}
		}
		c := int(cut % uint(len(prompt)+1))
		whole := normalizeAll([][]byte{[]byte(prompt)})
		split := normalizeAll([][]byte{[]byte(prompt[:c]), []byte(prompt[c:])})
		if !slices.Equal(whole.words, split.words) || string(whole.out) != string(split.out) {
			t.Fatalf("cut at %d changes the normalised text", c)
		}
	})
}

// FuzzScanner: a scan cut in two chunks finds what the whole scan finds, and
// a response that only repeats its own prompt is always clean.
func FuzzScanner(f *testing.F) {
	addSeeds(f)
	d := New(Config{Warmup: -1, CommonAfter: -1})
	for _, s := range seedTexts(f) {
		d.Remember("seed", "t", d.Fingerprint(string(s)))
	}
	d.AddSecret("canary-7f3a9c01e4b2d5a8", "canary")
	d.AddSecret("東京都", "cjk")
	f.Fuzz(func(t *testing.T, prompt, response string, cut uint) {
		own := d.Fingerprint(prompt)
		wf, wok := d.Scan("r", own, prompt, response)
		c := int(cut % uint(len(response)+1))
		s := d.NewScanner("r", own, prompt)
		s.Write([]byte(response[:c]))
		s.Write([]byte(response[c:]))
		s.Close()
		if cf, cok := s.Finding(); cf != wf || cok != wok {
			t.Fatalf("cut at %d: %+v %v, whole %+v %v", c, cf, cok, wf, wok)
		}
		if f, ok := d.Scan("r", own, prompt, prompt); ok {
			t.Fatalf("own prompt echoed: %+v", f)
		}
	})
}
