package jsonw

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString: the same bytes as json.Marshal, for any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "gpt-4o", "a\"b\\c", "<&>", "\x00\x1f\x7f", "é\u2028\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
		}
	})
}
