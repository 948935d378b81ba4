package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestEachText: every member of a response that carries text to a client
// is read, at its place, plain and streamed; a case or duplicate variant
// of one is refused rather than read one way by custody and another by
// the client.
func TestEachText(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"message", `{"choices":[{"index":0,"message":{"role":"assistant","content":"C","reasoning_content":"RC","reasoning":"R","refusal":"N",` +
			`"tool_calls":[{"id":"a","type":"function","function":{"name":"F0","arguments":"A0"}},{"id":"b","type":"function","function":{"name":"F1","arguments":"A1"}}],` +
			`"function_call":{"name":"FN","arguments":"FA"},"audio":{"id":"x","transcript":"T"}},` +
			`"logprobs":{"content":[{"token":"t1","logprob":-1,"top_logprobs":[{"token":"u1","logprob":-2},{"token":"v1","logprob":-3}]}],"refusal":[{"token":"r1","top_logprobs":[{"token":"w1"}]}]}}]}`,
			[]string{"content 0 0 C", "reasoning_content 0 0 RC", "reasoning 0 0 R", "refusal 0 0 N",
				"tool_calls.function.name 0 0 F0", "tool_calls.function.arguments 0 0 A0",
				"tool_calls.function.name 0 1 F1", "tool_calls.function.arguments 0 1 A1",
				"function_call.name 0 0 FN", "function_call.arguments 0 0 FA", "audio.transcript 0 0 T",
				"logprobs.token 0 0 t1", "logprobs.top_logprobs.token 0 0 u1", "logprobs.top_logprobs.token 0 1 v1",
				"logprobs.token 0 1 r1", "logprobs.top_logprobs.token 0 64 w1"}},
		{"delta", `{"choices":[{"index":2,"delta":{"reasoning_content":"r","tool_calls":[{"index":3,"function":{"arguments":"{\"k\":"}}]}}]}`,
			[]string{"reasoning_content 2 0 r", "tool_calls.function.arguments 2 3 {\"k\":"}},
		{"legacy", `{"choices":[{"index":0,"text":"X","logprobs":{"tokens":["X"],"top_logprobs":[{"X":-1}]}}]}`,
			[]string{"text 0 0 X", "logprobs.token 0 0 X"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseResponse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			r.EachText(func(field string, choice, index int, s string) {
				got = append(got, fmt.Sprint(field, " ", choice, " ", index, " ", s))
			})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	for _, body := range []string{
		`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","Name":"EVIL"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"function":{"arguments":"{}","arguments":"{\"x\":1}"}}]}}]}`,
		`{"choices":[{"delta":{"reasoning_content":"a","REASONING_CONTENT":"b"}}]}`,
		`{"choices":[{"message":{"refusal":"a","refusal":"b"}}]}`,
		`{"choices":[{"logprobs":{"content":[{"token":"a","Token":"b"}]}}]}`,
		`{"choices":[{"logprobs":{"content":[{"token":"a","top_logprobs":[{"token":"b","tokeN":"c"}]}]}}]}`,
		`{"choices":[{"message":{"function_call":{"name":"a","nam\u0065":"b"}}}]}`,
	} {
		if _, err := ParseResponse([]byte(body)); !errors.Is(err, ErrAmbiguous) {
			t.Errorf("%s: %v, want ambiguous", body, err)
		}
	}
}

// TestHasMessage: a choice's message is known present or absent on both
// decoding paths.
func TestHasMessage(t *testing.T) {
	for body, want := range map[string]bool{
		`{"choices":[{"index":0,"message":{"content":"x"}}]}`:                           true,
		`{"choices":[{"index":0,"finish_reason":"stop"}]}`:                              false,
		`{"choices":[{"index":0,"message":null}]}`:                                      false,
		`{"choices":[{"index":0,"message":{"content":"x"},"logprobs":{"content":[]}}]}`: true, // the slow path
		`{"choices":[{"index":0,"logprobs":{"content":[]}}]}`:                           false,
	} {
		r, err := ParseResponse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if r.Choices[0].HasMessage != want {
			t.Errorf("%s: HasMessage %v", body, r.Choices[0].HasMessage)
		}
	}
}

// FuzzEachTextExact: whatever ParseResponse accepts, EachText reports
// exactly the texts an exact-case reader (a JavaScript or Python client)
// finds in the members a client shows, in order: custody scans what the
// client reads, not what Go's case-folding decoder reads.
func FuzzEachTextExact(f *testing.F) {
	addSeeds(f, "testdata/responses")
	f.Add([]byte(`{"choices":[{"delta":{"reasoning_content":"r","Reasoning_content":"s"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResponse(b)
		if err != nil {
			return
		}
		var got []string
		r.EachText(func(field string, _, _ int, s string) { got = append(got, field+"="+s) })

		var top map[string]any // map keys are exact, as a client's are
		if json.Unmarshal(b, &top) != nil {
			t.Fatalf("accepted %q, not an object", b)
		}
		str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
		obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
		list := func(m map[string]any, k string) []any { l, _ := m[k].([]any); return l }
		var want []string
		add := func(field, s string) {
			if s != "" {
				want = append(want, field+"="+s)
			}
		}
		for _, c := range list(top, "choices") {
			c, _ := c.(map[string]any)
			for _, k := range []string{"message", "delta"} {
				m := obj(c, k)
				add(FieldContent, str(m, "content"))
				add(FieldReasoningContent, str(m, "reasoning_content"))
				add(FieldReasoning, str(m, "reasoning"))
				add(FieldRefusal, str(m, "refusal"))
				for _, tc := range list(m, "tool_calls") {
					fn := obj(func() map[string]any { o, _ := tc.(map[string]any); return o }(), "function")
					add(FieldToolName, str(fn, "name"))
					add(FieldToolArguments, str(fn, "arguments"))
				}
				if fc := obj(m, "function_call"); fc != nil {
					add(FieldFunctionName, str(fc, "name"))
					add(FieldFunctionArgs, str(fc, "arguments"))
				}
				add(FieldAudioTranscript, str(obj(m, "audio"), "transcript"))
			}
			add(FieldText, str(c, "text"))
			lp := obj(c, "logprobs")
			for _, k := range []string{"content", "refusal"} {
				for _, tok := range list(lp, k) {
					tok, _ := tok.(map[string]any)
					add(FieldLogprobToken, str(tok, "token"))
					for _, top := range list(tok, "top_logprobs") {
						top, _ := top.(map[string]any)
						add(FieldTopLogprobToken, str(top, "token"))
					}
				}
			}
			for _, tok := range list(lp, "tokens") {
				s, _ := tok.(string)
				add(FieldLogprobToken, s)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nEachText     %q\nexact reader %q", b, got, want)
		}
	})
}
