package adminapi

import (
	"slices"
	"testing"
)

func TestParseCheckpoint(t *testing.T) {
	cp := "custody.local/log\n12\nq0rXy5Vn0Ut6pJu0T7SFDMBbS5D8bk8Hn5c4+6s8tOw=\n\n— custody.local/log AAAAAbase64sig\n— w1.example BBBBcosig\n"
	got, ok := parseCheckpoint([]byte(cp), "custody.local/log")
	if !ok || got.Size != 12 || got.Origin != "custody.local/log" ||
		!slices.Equal(got.Signers, []string{"custody.local/log", "w1.example"}) ||
		!slices.Equal(got.Cosignatures, []string{"w1.example"}) {
		t.Errorf("parseCheckpoint = %v, %v", got, ok)
	}
	for _, bad := range []string{"", "origin\n12\n", "origin\nx12\nhash\n\n— a b\n", "origin\n12\nhash"} {
		if _, ok := parseCheckpoint([]byte(bad), "origin"); ok {
			t.Errorf("parseCheckpoint(%q) accepted", bad)
		}
	}
}

// FuzzParseCheckpoint: whatever the checkpoint file holds, reading it
// neither panics nor invents signers that are not "— name sig" lines.
func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte("custody.local/log\n12\nhash=\n\n— custody.local/log sig\n"))
	f.Add([]byte("o\n99999999999999999999999\nh\n\n—  \n— x\n"))
	f.Add([]byte("\n\n\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parseCheckpoint(b, "o")
		if !ok {
			return
		}
		for _, s := range got.Signers {
			if !slices.Contains(splitLines(string(b)), "— "+s) && !containsPrefix(splitLines(string(b)), "— "+s+" ") {
				t.Fatalf("signer %q is not a signature line of %q", s, b)
			}
		}
	})
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

func containsPrefix(lines []string, p string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return len(l) >= len(p) && l[:len(p)] == p })
}
