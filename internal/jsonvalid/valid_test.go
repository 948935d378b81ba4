package jsonvalid

import (
	"encoding/json"
	"strings"
	"testing"
)

var cases = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, ` {"a" : [1, 2.5, -0, 1e3, 1E+3, -1.5e-7, true, false, null, "x"]} `,
	`{"a":{"b":{"c":[[],{}]}}}`, `"\u00e9\n\t\"\\\/\b\f\r"`, `0`, `-`, `01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `-a`,
	`{"a"}`, `{"a":}`, `{,}`, `[,]`, `[1,]`, `{"a":1,}`, `[1 2]`, `{"a":1 "b":2}`, `{1:2}`, `["a\x"]`, `["\u12"]`,
	`["\u12g4"]`, "[\"\x01\"]", "[\"\x7f\xff\"]", `tru`, `truex`, `nul`, `null null`, `[}`, `{]`, `[[]`, `[]]`,
	`{"a":1}}`, "\ufeff{}", "{}\x00", `"abc`, `"abc\`, `{"a":"b"`, `[-0.0e-0]`, `1 `, ` 1`, "\t\n\r1\r\n\t",
}

// TestValidMatchesEncodingJSON: on every case, and at encoding/json's
// nesting limit and one past it, Valid answers as json.Valid does.
func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid says %v", c, got, want)
		}
	}
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"k":`} {
			closer := map[string]string{"[": "]", `{"k":`: "}"}[open]
			b := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(closer, depth))
			if got, want := Valid(b), json.Valid(b); got != want {
				t.Errorf("depth %d of %q: Valid = %v, json.Valid says %v", depth, open, got, want)
			}
		}
	}
	if !json.Valid([]byte(strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth))) {
		t.Fatalf("encoding/json's nesting limit is not %d", maxDepth)
	}
}

// FuzzValid: on any bytes, Valid answers as json.Valid does.
func FuzzValid(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

var response = []byte(`{"id":"chatcmpl-68e51e869f56bfced71f9a92","object":"chat.completion","created":1764606927,"model":"sim-1","system_fingerprint":"fp_1ef3b8e8e2","choices":[{"index":0,"message":{"role":"assistant","content":"Revenue grew 12% on cloud demand.\nMargins held at 31% despite costs.\nGuidance was raised for the next quarter."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":57,"completion_tokens":20,"total_tokens":77,"prompt_tokens_details":{"cached_tokens":0}}}`)

func BenchmarkValid(b *testing.B) {
	b.Run("jsonvalid", func(b *testing.B) {
		b.SetBytes(int64(len(response)))
		for b.Loop() {
			Valid(response)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(response)))
		for b.Loop() {
			json.Valid(response)
		}
	})
}
