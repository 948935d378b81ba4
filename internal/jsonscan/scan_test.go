package jsonscan

import (
	"encoding/json"
	"testing"
)

// TestValueAsDecoder: on valid JSON, Value ends every value where
// encoding/json's decoder ends it, strings with escaped quotes and
// backslash runs included.
func TestValueAsDecoder(t *testing.T) {
	for _, v := range []string{`"a"`, `"a\"b"`, `"a\\"`, `"a\\\"b\\\\"`, `""`, `12`, `-1.5e3`, `true`, `null`,
		`{}`, `[]`, `{"a":[1,{"b":"}"}],"c":"]"}`, `[["\\"],{"x":"\"{"}]`} {
		for _, tail := range []string{"", ",", " ]", "}"} {
			b := []byte(v + tail)
			var raw json.RawMessage
			if err := json.Unmarshal([]byte(v), &raw); err != nil {
				t.Fatalf("%s: not JSON: %v", v, err)
			}
			if got := Value(b, 0); got != len(v) {
				t.Errorf("Value(%s) = %d, want %d", b, got, len(v))
			}
		}
	}
}

func TestKey(t *testing.T) {
	b := []byte(`{ "mod\u0065l" :  "x" , "a":1}`)
	raw, vs := Key(b, Space(b, 1))
	if string(raw) != `"mod\u0065l"` || b[vs] != '"' || Value(b, vs) != vs+3 {
		t.Fatalf("Key = %s, value at %d (%q)", raw, vs, b[vs:])
	}
	raw, vs = Key(b, 24)
	if string(raw) != `"a"` || string(b[vs:Value(b, vs)]) != "1" {
		t.Fatalf("Key = %s, value %q", raw, b[vs:])
	}
	if got := Space([]byte(" \t\r\n x"), 0); got != 5 {
		t.Fatalf("Space = %d, want 5", got)
	}
}

func FuzzValue(f *testing.F) {
	for _, s := range []string{`{"a":"\\\"","b":[1,2,{"c":null}]}`, `"\\\\"`, `[{"x":"]"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		i := Space(b, 0)
		end := Space(b, Value(b, i))
		if end != len(b) {
			t.Fatalf("Value(%q) stopped at %d of %d", b, end, len(b))
		}
	})
}
