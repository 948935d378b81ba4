package check

import (
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

func TestStream(t *testing.T) {
	chunk := func(s string) *openai.Response {
		r, err := openai.ParseResponse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := `{"id":"a","model":"m","created":1,"choices":[{"delta":{"content":"x"}}]}`
	for _, tc := range []struct {
		name   string
		chunks []string
		want   custody.Code
	}{
		{"consistent", []string{a, a, `{"id":"a","model":"m","created":1,"choices":[],"usage":{"prompt_tokens":1}}`}, ""},
		{"other id", []string{a, `{"id":"b","model":"m","created":1,"choices":[]}`}, custody.CodeStreamInconsistent},
		{"other model", []string{a, `{"id":"a","model":"n","created":1,"choices":[]}`}, custody.CodeStreamInconsistent},
		// llama.cpp stamps every chunk with the current second.
		{"created rises", []string{a, `{"id":"a","model":"m","created":2,"choices":[]}`, `{"id":"a","model":"m","created":3601,"choices":[]}`}, ""},
		{"created goes back", []string{`{"id":"a","model":"m","created":5,"choices":[]}`, `{"id":"a","model":"m","created":4,"choices":[]}`}, custody.CodeStreamInconsistent},
		{"created goes back after rising", []string{a, `{"id":"a","model":"m","created":3,"choices":[]}`, `{"id":"a","model":"m","created":2,"choices":[]}`}, custody.CodeStreamInconsistent},
		{"created leaps past the bound", []string{a, `{"id":"a","model":"m","created":3602,"choices":[]}`}, custody.CodeStreamInconsistent},
		{"model changes late", []string{a, a, a, `{"id":"a","model":"n","created":1,"choices":[]}`}, custody.CodeStreamInconsistent},
		{"error chunk", []string{a, `{"error":{"message":"x"}}`}, custody.CodeUpstreamErrorAsSuccess},
		{"abort first chunk", []string{`{"id":"a","model":"m","created":1,"choices":[{"finish_reason":"abort"}]}`}, custody.CodeUpstreamErrorAsSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Stream
			var err error
			for _, c := range tc.chunks {
				if err = s.Chunk(chunk(c)); err != nil {
					break
				}
			}
			wantCode(t, err, tc.want)
		})
	}
	var s Stream
	wantCode(t, s.End(false, false), custody.CodeUpstreamErrorAsSuccess)
	_ = s.Chunk(chunk(a))
	wantCode(t, s.End(false, true), custody.CodeStreamInconsistent)
	wantCode(t, s.End(true, true), "")
}
