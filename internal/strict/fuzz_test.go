package strict

import (
	"encoding/json"
	"testing"
)

// FuzzCheck: any valid JSON is checked without a panic, and a body it
// accepts keeps every byte but the model's under ReplaceTop, and stays
// valid JSON.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"model":"a","messages":[{"role":"user","content":[{"type":"text"}]}]}`,
		`{"model":"a","Model":"b"}`, `{"mod\u0065l":"a"}`, `[{"model":1},{"model":2,"model":3}]`, `{ "x" : [1,{"model":2}], "model" : "a" }`} {
		f.Add([]byte(s))
	}
	m := Members{"model": nil, "messages": {"role": nil, "content": {"type": nil}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if Check(b, m) != nil {
			return
		}
		out := ReplaceTop(b, "model", []byte(`"up"`))
		if !json.Valid(out) {
			t.Fatalf("ReplaceTop(%s) = %s, not JSON", b, out)
		}
	})
}
