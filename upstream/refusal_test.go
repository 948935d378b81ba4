package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bodies as the engines write them.
const (
	openaiOverflow = `{
  "error": {
    "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130415 tokens. Please reduce the length of the messages.",
    "type": "invalid_request_error",
    "param": "messages",
    "code": "context_length_exceeded"
  }
}`
	llamacppOverflow = `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5210,"n_ctx":4096}}`
	vllmOverflowOld  = `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5210 tokens (5110 in the messages, 100 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`
	vllmOverflowNew  = `{"error":{"message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion. None","type":"BadRequestError","param":null,"code":400}}`
	sglangOverflow   = `{"object":"error","message":"The input (9000 tokens) is longer than the model's context length (8192 tokens).","type":"BadRequestError","param":null,"code":400}`
)

func TestReadRefusal(t *testing.T) {
	for _, tc := range []struct {
		name         string
		status       int
		body         string
		overflow     bool
		prompt, ctx  int
		inMessage    []string
		notInMessage []string
	}{
		{name: "openai context_length_exceeded", status: 400, body: openaiOverflow, overflow: true, prompt: 130415, ctx: 128000},
		{name: "llama.cpp exceed_context_size_error", status: 400, body: llamacppOverflow, overflow: true, prompt: 5210, ctx: 4096},
		{name: "vllm, object error", status: 400, body: vllmOverflowOld, overflow: true, prompt: 5210, ctx: 4096},
		{name: "vllm, error envelope", status: 400, body: vllmOverflowNew, overflow: true, prompt: 40000, ctx: 32768},
		{name: "sglang", status: 400, body: sglangOverflow, overflow: true, prompt: 9000, ctx: 8192},
		{name: "other 400", status: 400, body: `{"error":{"message":"temperature must be at most 2","type":"invalid_request_error","code":null}}`,
			inMessage: []string{"temperature must be at most 2"}},
		{name: "5xx message passed on", status: 500, body: `{"error":{"message":"CUDA out of memory. Tried to allocate 2.00 GiB","type":"server_error"}}`,
			inMessage: []string{"CUDA out of memory"}},
		{name: "5xx vllm object error", status: 503, body: `{"object":"error","message":"The engine is overloaded","type":"ServiceUnavailableError","code":503}`,
			inMessage: []string{"The engine is overloaded"}},
		{name: "5xx plain text", status: 502, body: "upstream connect error or disconnect/reset before headers\n",
			inMessage: []string{"upstream connect error"}},
		{name: "5xx html is not passed on", status: 502, body: "<html><body><h1>502 Bad Gateway</h1></body></html>",
			notInMessage: []string{"<html>"}},
		{name: "secrets stripped", status: 500, body: `{"error":{"message":"auth to https://admin:hunter2@db.internal:5432/x failed with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc; key sk-proj-ABCDEF1234567890abcdef, provider key sk-upstream-secret, api_key=zzz123456789"}}`,
			inMessage:    []string{"https://[redacted]@db.internal", "Authorization: [redacted]"},
			notInMessage: []string{"hunter2", "eyJhbGciOiJIUzI1NiJ9", "sk-proj-ABCDEF", "sk-upstream-secret", "zzz123456789"}},
		{name: "long message capped", status: 500, body: `{"error":{"message":"` + strings.Repeat("x", 5000) + `"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ReadRefusal(tc.status, []byte(tc.body), "sk-upstream-secret")
			if r.ContextOverflow != tc.overflow || r.PromptTokens != tc.prompt || r.ContextTokens != tc.ctx {
				t.Errorf("overflow %v prompt %d ctx %d, want %v %d %d", r.ContextOverflow, r.PromptTokens, r.ContextTokens, tc.overflow, tc.prompt, tc.ctx)
			}
			if len(r.Message) > maxRefusalMessage {
				t.Errorf("message of %d bytes", len(r.Message))
			}
			for _, s := range tc.inMessage {
				if !strings.Contains(r.Message, s) {
					t.Errorf("message %q lacks %q", r.Message, s)
				}
			}
			for _, s := range tc.notInMessage {
				if strings.Contains(r.Message, s) {
					t.Errorf("message %q holds %q", r.Message, s)
				}
			}
		})
	}
}

func FuzzReadRefusal(f *testing.F) {
	files, _ := filepath.Glob("testdata/refusals/*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(400, b)
			f.Add(500, b)
		}
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		r := ReadRefusal(status, body, "sk-upstream-secret")
		if len(r.Message) > maxRefusalMessage || strings.Contains(r.Message, "sk-upstream-secret") {
			t.Fatalf("message %q", r.Message)
		}
	})
}
