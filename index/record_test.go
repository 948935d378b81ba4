package index

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestColumn(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"clean", "glm-5.3-0827", "glm-5.3-0827"},
		{"empty", "", ""},
		{"unicode", "modèle-日本", "modèle-日本"},
		{"nul", "a\x00b", "a\uFFFDb"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"both", "\x00\xfe\xff", "\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Column(tt.in); got != tt.want {
				t.Errorf("Column(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzColumn: whatever an upstream reports, the column value is storable
// by postgres (valid UTF-8, no NUL), stable, and clean input is kept.
func FuzzColumn(f *testing.F) {
	for _, s := range []string{"gpt-4o", "a\x00b", "\xff", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Column(s)
		if !utf8.ValidString(c) || strings.IndexByte(c, 0) >= 0 {
			t.Fatalf("Column(%q) = %q: not storable", s, c)
		}
		if Column(c) != c {
			t.Fatalf("Column not idempotent on %q", s)
		}
		if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 && c != s {
			t.Fatalf("Column changed clean %q to %q", s, c)
		}
	})
}
