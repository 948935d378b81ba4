package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestParseRequestStrictMembers: a checked member appears once, spelled
// exactly; custody and the upstream must not read two different requests
// from one body.
func TestParseRequestStrictMembers(t *testing.T) {
	cases := []struct {
		name, body string
		want       string // in the error; "" = accepted
	}{
		{"plain", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, ""},
		{"unchecked duplicates pass", `{"model":"m","x":1,"x":2,"metadata":{"a":1,"A":2}}`, ""},
		{"duplicate model", `{"model":"a","messages":[],"model":"b"}`, `duplicate member "model"`},
		{"escaped model alone", `{"mod\u0065l":"m"}`, `member "model" is written with escapes`},
		{"escaped duplicate", `{"model":"a","mod\u0065l":"b"}`, `member "model"`},
		{"case variant model", `{"model":"a","Model":"b"}`, `member "Model" differs from "model" only in case`},
		{"case variant alone", `{"Messages":[],"model":"m"}`, `member "Messages" differs from "messages" only in case`},
		{"kelvin sign folds", "{\"model\":\"m\",\"max_to\u212aens\":5}", `differs from "max_tokens" only in case`},
		{"duplicate stream", `{"model":"m","stream":false,"stream":true}`, `duplicate member "stream"`},
		{"duplicate n", `{"model":"m","n":1,"n":2}`, `duplicate member "n"`},
		{"duplicate max_tokens", `{"model":"m","max_tokens":1,"max_tokens":9}`, `duplicate member "max_tokens"`},
		{"duplicate tools", `{"model":"m","tools":[],"tools":[]}`, `duplicate member "tools"`},
		{"duplicate tool_choice", `{"model":"m","tool_choice":"auto","Tool_choice":"none"}`, `only in case`},
		{"duplicate prompt", `{"model":"m","prompt":"a","prompt":"b"}`, `duplicate member "prompt"`},
		{"duplicate input", `{"model":"m","input":"a","input":"b"}`, `duplicate member "input"`},
		{"message role duplicate", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","role":"system","content":"b"}]}`, `messages[1]: duplicate member "role"`},
		{"message content case", `{"model":"m","messages":[{"role":"user","content":"a","Content":"b"}]}`, `messages[0]: member "Content" differs`},
		{"message name escaped", `{"model":"m","messages":[{"role":"user","n\u0061me":"x","content":"a"}]}`, `messages[0]: member "name" is written with escapes`},
		{"content part text duplicate", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]}`, `messages[0].content[0]: duplicate member "text"`},
		{"tool call function duplicate", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}","Arguments":"x"}}]}]}`, `messages[0].tool_calls[0].function: member "Arguments"`},
		{"include_usage duplicate", `{"model":"m","stream":true,"stream_options":{"include_usage":false,"include_usage":true}}`, `stream_options: duplicate member "include_usage"`},
		{"tools function name case", `{"model":"m","tools":[{"type":"function","function":{"name":"a","NAME":"b"}}]}`, `tools[0].function: member "NAME"`},
		{"schema keys are not checked", `{"model":"m","tools":[{"type":"function","function":{"name":"a","parameters":{"properties":{"x":{},"X":{}}}}}]}`, ""},
		{"unknown nested member passes", `{"model":"m","messages":[{"role":"user","content":"a","extra":1,"extra":2}]}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequest([]byte(tc.body))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadRequest containing %q", err, tc.want)
			}
		})
	}
}

// TestParseResponseStrictMembers: a response whose checked members are
// ambiguous is refused with ErrAmbiguous, at the top level and inside
// usage and choices.
func TestParseResponseStrictMembers(t *testing.T) {
	cases := []struct {
		name, body string
		want       string
	}{
		{"plain", `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1}}`, ""},
		{"duplicate model", `{"id":"x","model":"evil","choices":[],"model":"m"}`, `duplicate member "model"`},
		{"case variant model", `{"id":"x","model":"evil","choices":[],"Model":"m"}`, `member "Model" differs from "model" only in case`},
		{"escaped id", `{"\u0069d":"x","model":"m"}`, `member "id" is written with escapes`},
		{"duplicate usage", `{"model":"m","usage":{"prompt_tokens":1},"usage":{"prompt_tokens":700}}`, `duplicate member "usage"`},
		{"prompt_tokens duplicate", `{"model":"m","usage":{"prompt_tokens":1,"prompt_tokens":700}}`, `usage: duplicate member "prompt_tokens"`},
		{"prompt_tokens case", `{"model":"m","usage":{"prompt_tokens":1,"Prompt_Tokens":700}}`, `usage: member "Prompt_Tokens"`},
		{"choices case", `{"model":"m","choices":[],"Choices":[{}]}`, `member "Choices"`},
		{"object duplicate", `{"model":"m","object":"a","object":"b"}`, `duplicate member "object"`},
		{"fingerprint case", `{"model":"m","system_fingerprint":"a","System_fingerprint":"b"}`, `member "System_fingerprint"`},
		{"finish reason duplicate", `{"model":"m","choices":[{"finish_reason":"stop","finish_reason":"abort"}]}`, `choices[0]: duplicate member "finish_reason"`},
		{"delta content case", `{"model":"m","choices":[{"delta":{"content":"a","CONTENT":"b"}}]}`, `choices[0].delta: member "CONTENT"`},
		{"unchecked duplicates pass", `{"model":"m","x":1,"x":2}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResponse([]byte(tc.body))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrAmbiguous containing %q", err, tc.want)
			}
		})
	}
}

// exactString reads a string member the way an exact-case, last-wins
// parser (Python's json, JavaScript's JSON.parse) does.
func exactString(obj json.RawMessage, name string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return "", false
	}
	raw, ok := m[name]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// FuzzStrictRequest: whatever ParseRequest accepts, custody's reading,
// Go's case-insensitive reading (ParsePrompt, encoding/json) and an
// exact-case reader agree on the model and on every message's role and
// name.
func FuzzStrictRequest(f *testing.F) {
	addSeeds(f, "testdata/requests")
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		if m, _ := exactString(body, "model"); m != r.Model {
			t.Fatalf("custody reads model %q, an exact reader %q", r.Model, m)
		}
		p, err := ParsePrompt(EndpointChat, body)
		if err != nil {
			return
		}
		var exact struct {
			Messages []json.RawMessage `json:"messages"`
		}
		var top map[string]json.RawMessage
		json.Unmarshal(body, &top)
		json.Unmarshal(top["messages"], &exact.Messages)
		if len(exact.Messages) != len(p.Messages) {
			t.Fatalf("%d messages to Go, %d to an exact reader", len(p.Messages), len(exact.Messages))
		}
		for i, m := range exact.Messages {
			role, _ := exactString(m, "role")
			name, _ := exactString(m, "name")
			if role != p.Messages[i].Role || name != p.Messages[i].Name {
				t.Fatalf("message %d: Go reads %q/%q, an exact reader %q/%q", i, p.Messages[i].Role, p.Messages[i].Name, role, name)
			}
		}
	})
}

// FuzzStrictResponse: whatever ParseResponse accepts, encoding/json's
// reading and an exact-case reader agree on id, model and
// usage.prompt_tokens.
func FuzzStrictResponse(f *testing.F) {
	addSeeds(f, "testdata/responses")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResponse(b)
		if err != nil {
			return
		}
		for name, got := range map[string]string{"id": r.ID, "model": r.Model} {
			if s, _ := exactString(b, name); s != got {
				t.Fatalf("%s: Go reads %q, an exact reader %q", name, got, s)
			}
		}
		var top map[string]json.RawMessage
		json.Unmarshal(b, &top)
		var u map[string]json.RawMessage
		if json.Unmarshal(top["usage"], &u) == nil && r.Usage != nil {
			var n int
			if json.Unmarshal(u["prompt_tokens"], &n) == nil && n != r.Usage.PromptTokens {
				t.Fatalf("prompt_tokens: Go reads %d, an exact reader %d", r.Usage.PromptTokens, n)
			}
		}
	})
}

// BenchmarkParseRequest: the strict pass over a typical chat body and a
// large one (its cost is linear in the body: one scan, no decode).
func BenchmarkParseRequest(b *testing.B) {
	msg := `{"role":"user","content":"` + strings.Repeat("the quick brown fox ", 20) + `"}`
	for _, n := range []int{2, 4000} {
		body := []byte(`{"model":"m","stream":true,"messages":[` + strings.Repeat(msg+",", n-1) + msg + `]}`)
		b.Run(fmt.Sprintf("%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseRequest(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
