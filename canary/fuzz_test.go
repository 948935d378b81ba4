package canary

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F, glob string) {
	files, err := filepath.Glob(filepath.Join("testdata", glob))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", glob, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParseEnrollment: an enrollment file is read back from disk. Parsing
// never panics, and what it accepts survives a write and a re-read and
// can be tested against.
func FuzzParseEnrollment(f *testing.F) {
	addSeeds(f, "enrollment-*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEnrollment(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := ParseEnrollment(again)
		if err != nil {
			t.Fatalf("re-parsing an accepted enrollment: %v", err)
		}
		if len(b) < 16<<10 { // the test's cost grows with samples² × tokens
			cfg := IdentityConfig{Permutations: 9}.withDefaults()
			identityTest(e2.Samples, e2.Samples, cfg, testRand())
		}
		_ = e2.params()
	})
}

// FuzzParseAnswer: chat completion bodies come from the upstream.
func FuzzParseAnswer(f *testing.F) {
	addSeeds(f, "answer-*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseAnswer(b)
		if err != nil {
			return
		}
		s := sampleOf(a)
		if err := s.validate(); err != nil && len(a.Tokens) <= maxSampleTokens {
			t.Fatalf("sample of an accepted answer is invalid: %v", err)
		}
		_ = nonceLike(a.Text)
	})
}
