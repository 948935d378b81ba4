package check

import (
	"encoding/json"
	"testing"
)

// TestPositive: positive reads a member as decoding it into an int did
// (the reference here), for every kind of JSON value.
func TestPositive(t *testing.T) {
	decoded := func(b []byte) int {
		var n int
		if b == nil || json.Unmarshal(b, &n) != nil || n < 0 {
			return 0
		}
		return n
	}
	for _, s := range []string{"", "0", "1", "200", "-0", "-5", "1.5", "1e3", "1E3", "2.0", "null", "true", `"5"`, "[1]", "{}",
		"9223372036854775807", "9223372036854775808", "92233720368547758070", "-9223372036854775808"} {
		var b []byte
		if s != "" {
			b = []byte(s)
		}
		if got, want := positive(b), decoded(b); got != want {
			t.Errorf("positive(%s) = %d, decoded %d", s, got, want)
		}
	}
}
