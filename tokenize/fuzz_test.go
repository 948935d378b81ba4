package tokenize

import (
	"testing"
)

// FuzzCountMatchesReference compares the engine with tiktoken-go on
// arbitrary bytes, seeded with the fixture texts.
func FuzzCountMatchesReference(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		if len(fx.Text) <= 1024 {
			f.Add(fx.Text)
		}
	}
	f.Add("\xff\xfe\xe2\x82 x\xed\xa0\x80")
	encs := make([]*Encoding, len(encodingNames))
	for i, name := range encodingNames {
		encs[i] = mustEncoding(f, name)
		reference(f, name)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1024 {
			return // tiktoken-go is quadratic; keep each run (and minimization) quick
		}
		for _, e := range encs {
			if got, want := e.Count(text), len(reference(t, e.name).EncodeOrdinary(text)); got != want {
				t.Fatalf("%s: Count(%q) = %d, tiktoken-go %d\n%s", e.name, text, got, want, describe(t, e, text))
			}
		}
	})
}
