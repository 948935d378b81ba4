package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/custody-gateway/custody/internal/jsonscan"
)

// TestDigest: the digest says what the upstream was asked, not how the
// client spelled it.
func TestDigest(t *testing.T) {
	base := `{"model":"m","input":"the same words","dimensions":8,"messages":[{"role":"user","content":"hé"}]}`
	same := []string{
		` { "messages" : [ {"content":"h\u00e9","role":"user"} ], "dimensions":8, "input":"the same words", "model":"m" } `,
		`{"model":"m","input":"the same words","dimensions":8,"messages":[{"role":"user","content":"hé"}],"user":"tenant-b"}`,
		`{"metadata":{"a":1},"model":"client-name","input":"the same words","dimensions":8,"messages":[{"role":"user","content":"hé"}]}`,
		`{"model":"m","input":"the s\u0061me words","dimensions":8,"messages":[{"role":"user","content":"hé"}]}`,
	}
	other := []string{
		`{"model":"m","input":"other words","dimensions":8,"messages":[{"role":"user","content":"hé"}]}`,
		`{"model":"m","input":"the same words","dimensions":9,"messages":[{"role":"user","content":"hé"}]}`,
		`{"model":"m","input":"the same words","dimensions":"8","messages":[{"role":"user","content":"hé"}]}`,
		`{"model":"m","input":"the same words","dimensions":8,"messages":[{"role":"system","content":"hé"}]}`,
		`{"model":"m","input":["the same words"],"dimensions":8,"messages":[{"role":"user","content":"hé"}]}`,
		`{"model":"m","input":"the same words","dimensions":8,"messages":[{"role":"user","content":"hé"}],"n":2}`,
		`{"model":"m","input":"the same words","dimensions":8,"messages":[{"role":"user","content":"hé","user":"x"}]}`, // only top-level user is dropped
	}
	digest := func(s, model string) [32]byte {
		r, err := ParseRequest([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return r.Digest(model)
	}
	want := digest(base, "up")
	for _, s := range same {
		if digest(s, "up") != want {
			t.Errorf("digest differs for %s", s)
		}
	}
	for _, s := range other {
		if digest(s, "up") == want {
			t.Errorf("digest equal for %s", s)
		}
	}
	if digest(base, "other-upstream-model") == want {
		t.Error("the upstream model is not in the digest")
	}
}

// FuzzDigest: never panics; respelling a body (encoding/json re-encodes
// it: sorted members, its own escapes and spacing) keeps its digest,
// unless the body has duplicate members (which re-encoding drops).
func FuzzDigest(f *testing.F) {
	addSeeds(f, "testdata/requests")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		d := r.Digest("fuzz")
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || hasDuplicates(body) {
			return
		}
		re, err := json.Marshal(v)
		if err != nil {
			return
		}
		r2, err := ParseRequest(re)
		if err != nil {
			t.Fatalf("re-encoded body refused: %v\n%s", err, re)
		}
		if r2.Digest("fuzz") != d {
			t.Fatalf("respelling changed the digest:\n%s\n%s", body, re)
		}
	})
}

// hasDuplicates reports whether any object in the (valid) JSON b has a
// member twice, after unescaping.
func hasDuplicates(b []byte) bool {
	dup := false
	var walk func(i int)
	walk = func(i int) {
		switch b[i] {
		case '{':
			seen := map[string]bool{}
			eachMember(b, i, func(raw []byte, vs, _ int) error {
				k := string(unquote(append(append([]byte{'"'}, raw...), '"')))
				dup = dup || seen[k]
				seen[k] = true
				walk(vs)
				return nil
			})
		case '[':
			eachElement(b, i, func(_, vs int) error { walk(vs); return nil })
		}
	}
	walk(jsonscan.Space(b, 0))
	return dup
}

func BenchmarkDigest(b *testing.B) {
	r, err := ParseRequest([]byte(`{"model":"sim-1","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Summarise the attached quarterly report in three bullet points, each under twenty words."}],"max_tokens":32,"temperature":0.2,"stream":false}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Digest("sim-1-0827")
	}
}
