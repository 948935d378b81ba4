package openai

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
)

// TestScanResponse: the fast path fills a Response as json.Unmarshal
// does, and hands what it does not handle alike to json.Unmarshal.
func TestScanResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
		fast bool // the scanner decides (else encoding/json)
	}{
		{"chat", `{"id":"c1","object":"chat.completion","created":1700000000,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi","tool_calls":[]},"logprobs":null}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1}}}`, true},
		{"chunk", `{"id":"c1","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`, true},
		{"usage chunk", `{"id":"c1","choices":[],"usage":{"prompt_tokens":3}}`, true},
		{"reasoning tokens", `{"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":6,"audio_tokens":0}}}`, true},
		{"reasoning tokens case variant", `{"usage":{"completion_tokens_details":{"Reasoning_tokens":6}}}`, false},
		{"tool calls", `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},null]}}]}`, true},
		{"tool call pieces", `{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}},{"delta":{"tool_calls":[]}},{"delta":{"tool_calls":null}}]}`, true},
		{"tool call not an object", `{"choices":[{"delta":{"tool_calls":[5]}}]}`, false},
		{"tool call case variant", `{"choices":[{"delta":{"tool_calls":[{"Function":{"name":"f"}}]}}]}`, false},
		{"every text field", `{"choices":[{"index":0,"message":{"role":"assistant","content":"a","reasoning_content":"b","reasoning":"c","refusal":"d","tool_calls":[{"id":"x","function":{"name":"e","arguments":"f"}}]},"logprobs":null}]}`, true},
		{"logprobs", `{"choices":[{"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-1,"top_logprobs":[{"token":"b","logprob":-2}]}]}}]}`, false},
		{"function_call", `{"choices":[{"message":{"function_call":{"name":"f","arguments":"{}"}}}]}`, false},
		{"audio", `{"choices":[{"message":{"audio":{"id":"a","transcript":"t"}}}]}`, false},
		{"reasoning case variant", `{"choices":[{"delta":{"Reasoning_content":"x"}}]}`, false},
		{"legacy text", `{"choices":[{"text":" there","index":1}]}`, true},
		{"escapes", `{"id":"a\"b","choices":[{"message":{"content":"line\nnext \u00e9 \ud83d\ude00"}}]}`, true},
		{"invalid UTF-8 becomes U+FFFD", "{\"model\":\"m\xff\"}", true},
		{"nulls", `{"id":null,"created":null,"choices":[null,{"message":null,"delta":null}],"usage":null,"error":null,"data":null}`, true},
		{"embeddings", `{"object":"list","data":[{"index":0,"embedding":[0.1,-2e-3]},{"index":1,"embedding":[]}],"model":"e"}`, true},
		{"empty data", `{"data":[]}`, true},
		{"unknown members skipped", `{"x":{"Model":1,"id":[1,{"a":"}"}]},"model":"m"}`, true},
		{"negative and zero", `{"created":-5,"choices":[{"index":0}]}`, true},
		{"case variant", `{"Model":"m"}`, false},
		{"nested case variant", `{"choices":[{"Message":{"content":"x"}}]}`, false},
		{"escaped key", `{"mod\u0065l":"m"}`, false},
		{"duplicate", `{"model":"a","model":"b"}`, false},
		{"error object", `{"error":{"message":"x","code":"y"}}`, false},
		{"fraction", `{"created":1.5}`, false},
		{"exponent", `{"usage":{"prompt_tokens":1e2}}`, false},
		{"overflow", `{"created":99999999999999999999}`, false},
		{"string as number", `{"usage":{"prompt_tokens":"many"}}`, false},
		{"number as string", `{"model":5}`, false},
		{"choices not a list", `{"choices":5}`, false},
		{"content parts", `{"choices":[{"message":{"content":[{"type":"text"}]}}]}`, false},
		{"not an object", `[1]`, false},
		{"null body", `null`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.body)
			var got Response
			fast := json.Valid(b) && scanResponse(b, &got)
			if fast != tt.fast {
				t.Fatalf("scanner decided: %v, want %v", fast, tt.fast)
			}
			if !fast {
				return
			}
			var want Response
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("the scanner accepted what encoding/json refuses: %v", err)
			}
			markMessages(b, &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("scanner:\n%+v\nencoding/json:\n%+v", got, want)
			}
		})
	}
}

// FuzzScanResponse: on any body, what the fast path decides is what
// json.Unmarshal decodes, so that the checks read the same response
// whichever path read it.
func FuzzScanResponse(f *testing.F) {
	f.Add([]byte(`{"id":"c1","model":"m","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3}}`))
	f.Add([]byte(`{"choices":[null,{"delta":{"role":"assistant","content":"\u00e9"}}],"usage":{"prompt_tokens_details":{"cached_tokens":2}}}`))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[0.1]}],"created":-1}`))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"x\""}},null]}}]}`))
	f.Add([]byte(`{"ſystem_fingerprint":"x","K":1}`))
	f.Add([]byte(`{"choices":[{"index":1,"delta":{"reasoning_content":"r","reasoning":"s","refusal":"n","tool_calls":[{"index":2,"function":{"name":"f","arguments":"a"}}]},"logprobs":{"content":[{"token":"t","top_logprobs":[{"token":"u"}]}],"refusal":null}}]}`))
	addSeeds(f, "testdata/responses")
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var got Response
		if !scanResponse(b, &got) {
			return
		}
		var want Response
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("the scanner accepted %q, which encoding/json refuses: %v", b, err)
		}
		markMessages(b, &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nscanner:       %+v\nencoding/json: %+v", b, got, want)
		}
		// After a chunk (itself, and one with other strings), the same.
		for _, prev := range []Response{got, {ID: "c1", Model: "m", SystemFingerprint: "fp"}} {
			var again Response
			if !scanResponseAfter(b, &again, &prev) || !reflect.DeepEqual(again, want) {
				t.Fatalf("%q after %+v:\nscanner:       %+v\nencoding/json: %+v", b, prev, again, want)
			}
		}
	})
}

// TestDecodeStream: a stream's chunks decoded one after another into one
// Response decode as each alone does, and the strings a chunk repeats
// from the one before are the earlier chunk's, not copies.
func TestDecodeStream(t *testing.T) {
	var r Response
	var id, model string
	for i, c := range streamChunks {
		if err := r.Decode(c); err != nil {
			t.Fatal(err)
		}
		var alone Response
		if err := alone.Decode(c); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r, alone) {
			t.Fatalf("chunk %d after the others:\n%+v\nalone:\n%+v", i, r, alone)
		}
		if i > 0 && (unsafe.StringData(r.ID) != unsafe.StringData(id) || unsafe.StringData(r.Model) != unsafe.StringData(model)) {
			t.Errorf("chunk %d copied the id or model the chunk before had", i)
		}
		id, model = r.ID, r.Model
	}
	other := []byte(`{"id":"chatcmpl-other","model":"sim-2","choices":[]}`)
	if err := r.Decode(other); err != nil || r.ID != "chatcmpl-other" || r.Model != "sim-2" || r.SystemFingerprint != "" {
		t.Errorf("a chunk with other strings after the stream: %+v, %v", r, err)
	}
}

// BenchmarkDecodeResponse: a chat completion as the simulator sends it.
func BenchmarkDecodeResponse(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-sim-0123456789","object":"chat.completion","created":1764590000,"model":"sim-1","system_fingerprint":"fp_sim","choices":[{"index":0,"message":{"role":"assistant","content":"A transparency log lets every client check that the gateway recorded its exchange, and nobody can rewrite it later."},"finish_reason":"stop"}],"usage":{"prompt_tokens":41,"completion_tokens":16,"total_tokens":57,"prompt_tokens_details":{"cached_tokens":0}}}`)
	var r Response
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

// streamChunks are a chat completion stream's chunks as the simulator
// sends them: every chunk repeats the id, object, model and fingerprint.
var streamChunks = [][]byte{
	[]byte(`{"id":"chatcmpl-sim-0123456789","object":"chat.completion.chunk","created":1764590000,"model":"sim-1","system_fingerprint":"fp_sim","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`),
	[]byte(`{"id":"chatcmpl-sim-0123456789","object":"chat.completion.chunk","created":1764590000,"model":"sim-1","system_fingerprint":"fp_sim","choices":[{"index":0,"delta":{"content":" transparency"},"finish_reason":null}]}`),
	[]byte(`{"id":"chatcmpl-sim-0123456789","object":"chat.completion.chunk","created":1764590000,"model":"sim-1","system_fingerprint":"fp_sim","choices":[{"index":0,"delta":{"content":" log"},"finish_reason":null}]}`),
	[]byte(`{"id":"chatcmpl-sim-0123456789","object":"chat.completion.chunk","created":1764590000,"model":"sim-1","system_fingerprint":"fp_sim","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
}

// BenchmarkDecodeStream: a stream's chunks decoded one after another into
// one Response, as the gateway's stream parser does.
func BenchmarkDecodeStream(b *testing.B) {
	var r Response
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range streamChunks {
			if err := r.Decode(c); err != nil {
				b.Fatal(err)
			}
		}
	}
}
