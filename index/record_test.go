package index

import (
	"strings"
	"testing"
	"time"
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

func TestCanaryEvent(t *testing.T) {
	tests := []struct {
		name                string
		kind, probe, detail string
		want                string
	}{
		{"evidence names the probe", "canary_failure", "needle", "needle: nonce k9 missing", "canary_failure: needle: nonce k9 missing"},
		{"evidence without the probe", "canary_failure", "echo", "id mismatch", "canary_failure: echo: id mismatch"},
		{"no probe", "canary_quarantined", "", "2 failing runs in a row", "canary_quarantined: 2 failing runs in a row"},
		{"kind alone", "canary_recovered", "", "", "canary_recovered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := CanaryEvent(time.Unix(1, 0), tt.kind, "sim-1", "sim-1/primary", tt.probe, tt.detail)
			if e.Detail != tt.want {
				t.Errorf("Detail = %q, want %q", e.Detail, tt.want)
			}
			if e.Type != EventCanary || e.Route != "sim-1/primary" || e.Provider != "primary" || e.Model != "sim-1" {
				t.Errorf("event = %+v: want type canary, route sim-1/primary, provider primary, model sim-1", e)
			}
		})
	}
}
