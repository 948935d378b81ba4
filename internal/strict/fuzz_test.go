package strict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzCheck: any valid JSON is checked without a panic, as the decoder
// walk checked it (the same error, or none), and a body it accepts keeps
// every byte but the model's under ReplaceTop, and stays valid JSON.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"model":"a","messages":[{"role":"user","content":[{"type":"text"}]}]}`,
		`{"model":"a","Model":"b"}`, `{"mod\u0065l":"a"}`, `[{"model":1},{"model":2,"model":3}]`, `{ "x" : [1,{"model":2}], "model" : "a" }`} {
		f.Add([]byte(s))
	}
	for _, s := range checkBodies {
		f.Add([]byte(s))
	}
	m := checkMembers
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		err := Check(b, m)
		if want := checkDecoder(b, m); fmt.Sprint(err) != fmt.Sprint(want) {
			t.Fatalf("Check(%s) = %v, the decoder's %v", b, err, want)
		}
		if err != nil {
			return
		}
		out := ReplaceTop(b, "model", []byte(`"up"`))
		if want := replaceTopDecoder(b, "model", []byte(`"up"`)); !bytes.Equal(out, want) {
			t.Fatalf("ReplaceTop(%s) = %s, the decoder's %s", b, out, want)
		}
		if !json.Valid(out) {
			t.Fatalf("ReplaceTop(%s) = %s, not JSON", b, out)
		}
	})
}
