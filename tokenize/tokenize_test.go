package tokenize

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	cases := []struct {
		spec       string
		wantErr    bool
		upperBound bool
	}{
		{"o200k_base", false, false},
		{"cl100k_base", false, false},
		{"bytes", false, true},
		{"file:" + tinyTokenizer, false, false},
		{"p50k_base", true, false},
		{"", true, false},
		{"file:", true, false},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			ctr, err := Lookup(c.spec)
			if c.wantErr {
				if err == nil || ctr != nil {
					t.Fatalf("Lookup = %v, %v; want an error and no counter", ctr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ctr.Name() != c.spec {
				t.Errorf("Name = %q, want %q", ctr.Name(), c.spec)
			}
			ub, ok := ctr.(UpperBound)
			if got := ok && ub.UpperBound(); got != c.upperBound {
				t.Errorf("UpperBound = %v, want %v", got, c.upperBound)
			}
		})
	}
}

// TestBytesIsAnUpperBound checks the claim Bytes documents: no byte-level
// BPE count exceeds the byte count of valid UTF-8.
func TestBytesIsAnUpperBound(t *testing.T) {
	fs := loadFixtures(t)
	for _, f := range fs {
		if b := (Bytes{}).Count(f.Text); f.O200k > b || f.CL100k > b {
			t.Errorf("%.40q: %d bytes but %d/%d tokens", f.Text, b, f.O200k, f.CL100k)
		}
	}
}

func TestChat(t *testing.T) {
	msgs := []Message{
		{Role: "system", Content: "abc"},
		{Role: "user", Name: "jo", Content: "hello"},
	}
	// With Bytes every string counts its length: 3 priming, 3+6+3 for the
	// first message, 3+4+5 and 1+2 for the second.
	if got, want := Chat(Bytes{}, msgs), 3+(3+6+3)+(3+4+5)+(1+2); got != want {
		t.Errorf("Chat = %d, want %d", got, want)
	}
	if got := Chat(Bytes{}, nil); got != ReplyPriming {
		t.Errorf("Chat(nil) = %d, want %d", got, ReplyPriming)
	}
}

// TestInvalidUTF8CountsAsReplacement pins the documented behaviour: each
// byte outside valid UTF-8 counts as U+FFFD.
func TestInvalidUTF8CountsAsReplacement(t *testing.T) {
	cases := []struct{ name, invalid, replaced string }{
		{"lone byte", "\xff", "\uFFFD"},
		{"in a word", "ab\xffcd", "ab\uFFFDcd"},
		{"truncated sequence", "x\xe2\x82 y", "x\uFFFD\uFFFD y"},
		{"surrogate", "\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"run", strings.Repeat("\xfe", 100), strings.Repeat("\uFFFD", 100)},
	}
	for _, name := range encodingNames {
		e := mustEncoding(t, name)
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				if got, want := e.Count(c.invalid), e.Count(c.replaced); got != want {
					t.Errorf("Count(%q) = %d, Count(%q) = %d", c.invalid, got, c.replaced, want)
				}
			})
		}
	}
}

func TestCountDoesNotAllocate(t *testing.T) {
	e := mustEncoding(t, "o200k_base")
	text := corpus(64 << 10)
	e.Count(text)
	if n := testing.AllocsPerRun(5, func() { e.Count(text) }); n > 0 {
		t.Errorf("Count allocates %v times a call", n)
	}
}
