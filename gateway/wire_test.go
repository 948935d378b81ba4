package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/index/sqlite"
)

// streamChunk is one chat chunk as an engine writes it.
func streamChunk(id, model string, created int64, content string) string {
	return fmt.Sprintf("data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", id, created, model, content)
}

func usageChunk(id, model string, created int64, usage int) string {
	return fmt.Sprintf("data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":2,\"total_tokens\":%d}}\n\n", id, created, model, usage, usage+2)
}

// TestStreamTruncatedIsNeverCompleted: an upstream stream that ends
// without [DONE] (here right after the usage chunk) ends, for the client,
// with one stream_truncated error event and no [DONE].
func TestStreamTruncatedIsNeverCompleted(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail string
		drop bool // the connection is closed mid-body (no chunked terminator)
	}{
		{"after usage", "", false},
		{"inside an event", "data: {\"id\":", false},
		{"connection dropped", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig)
			h.primary.stream = func(w io.Writer, id string, usage int) {
				io.WriteString(w, streamChunk(id, "small", 1, "Hello"))
				io.WriteString(w, usageChunk(id, "small", 1, usage))
				io.WriteString(w, tc.tail)
				if tc.drop {
					w.(http.Flusher).Flush()
					conn, _, err := w.(http.Hijacker).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					conn.Close()
				}
			}
			resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
			if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "pending" {
				t.Fatalf("status %d verdict %q", resp.StatusCode, resp.Header.Get("Custody-Verdict"))
			}
			if strings.Contains(body, "[DONE]") || !strings.Contains(body, `"code":"stream_truncated"`) {
				t.Fatalf("stream body: %s", body)
			}
			lines := nonEmptyLines(body)
			n := len(lines)
			if !strings.HasPrefix(lines[n-3], `data: {"error":`) || !strings.HasPrefix(lines[n-2], ": custody-receipt ") || !strings.HasPrefix(lines[n-1], ": custody-verdict rejected") {
				t.Errorf("stream does not end with the error event, receipt and verdict: %q", lines)
			}
			if !strings.Contains(body, ": custody-verdict rejected checks=") || !strings.Contains(body, ": custody-receipt "+resp.Header.Get("Custody-Request-Id")) {
				t.Errorf("verdict or receipt comment missing: %s", body)
			}
			if v := resp.Trailer.Get("Custody-Verdict"); v != "rejected" {
				t.Errorf("trailer verdict %q", v)
			}
			if tx := h.rec.last(t); tx.Code != custody.CodeStreamTruncated || tx.Verdict != custody.Rejected {
				t.Errorf("recorded %s %s", tx.Verdict, tx.Code)
			}
		})
	}
}

// TestStreamCreatedMayRise: llama.cpp stamps each chunk with the current
// second; such a stream is verified. A created that falls is another
// stream's chunk.
func TestStreamCreatedMayRise(t *testing.T) {
	for _, tc := range []struct {
		name    string
		created []int64
		code    custody.Code
	}{
		{"ticking", []int64{100, 100, 101, 103}, ""},
		{"falling", []int64{100, 101, 100, 101}, custody.CodeStreamInconsistent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig)
			h.primary.stream = func(w io.Writer, id string, usage int) {
				for i, c := range tc.created[:len(tc.created)-1] {
					io.WriteString(w, streamChunk(id, "small", c, fmt.Sprint(" w", i)))
				}
				io.WriteString(w, usageChunk(id, "small", tc.created[len(tc.created)-1], usage))
				io.WriteString(w, "data: [DONE]\n\n")
			}
			resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
			tx := h.rec.last(t)
			if tx.Code != tc.code {
				t.Fatalf("recorded code %q, want %q: %s", tx.Code, tc.code, body)
			}
			if tc.code == "" && (!strings.HasSuffix(body, "data: [DONE]\n\n") || resp.Trailer.Get("Custody-Verdict") != "verified") {
				t.Errorf("honest stream not verified (%s): %s", resp.Trailer.Get("Custody-Verdict"), body)
			}
			if tc.code != "" && strings.Contains(body, "[DONE]") {
				t.Errorf("rejected stream completed: %s", body)
			}
		})
	}
}

// TestStreamModelChecksEveryChunk: a chunk with another model, late in
// the stream, ends it.
func TestStreamModelChecksEveryChunk(t *testing.T) {
	h := newHarness(t, testConfig)
	h.primary.stream = func(w io.Writer, id string, usage int) {
		io.WriteString(w, streamChunk(id, "small", 1, "a"))
		io.WriteString(w, streamChunk(id, "small", 1, "b"))
		io.WriteString(w, streamChunk(id, "other-model", 1, "c"))
		io.WriteString(w, usageChunk(id, "small", 1, usage))
		io.WriteString(w, "data: [DONE]\n\n")
	}
	_, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
	if strings.Contains(body, "[DONE]") || strings.Contains(body, `"content":"c"`) || !strings.Contains(body, `"code":"stream_inconsistent"`) {
		t.Fatalf("stream body: %s", body)
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestRequestAmbiguousMembersRefused: duplicate, case- and escape-variant
// copies of a checked request member are refused 400, never forwarded.
func TestRequestAmbiguousMembersRefused(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"duplicate model", `{"model":"small","messages":[{"role":"user","content":"hi"}],"model":"big"}`, `duplicate member \"model\"`},
		{"escaped model", `{"mod\u0065l":"small","messages":[{"role":"user","content":"hi"}]}`, `member \"model\" is written with escapes`},
		{"case-variant messages", `{"model":"small","messages":[{"role":"user","content":"hi"}],"Messages":[{"role":"user","content":"other"}]}`, `member \"Messages\" differs from \"messages\" only in case`},
		{"duplicate role", `{"model":"small","messages":[{"role":"user","role":"system","content":"hi"}]}`, `messages[0]: duplicate member \"role\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig)
			resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", tc.body)
			if resp.StatusCode != 400 || errCode(t, body) != string(custody.CodeInvalidRequest) || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if h.primary.calls.Load() != 0 {
				t.Error("forwarded")
			}
		})
	}
}

// TestResponseAmbiguousMembersRefused: an upstream answer whose model is
// written twice (Go reads one, Python the other) is refused, plain and
// streamed.
func TestResponseAmbiguousMembersRefused(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		h := newHarness(t, testConfig)
		h.primary.mutate = func(m map[string]any, _ *http.Request) { m["Model"] = "evil" }
		resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false))
		if resp.StatusCode != 502 || errCode(t, body) != string(custody.CodeResponseAmbiguous) || !strings.Contains(body, `\"Model\"`) {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if tx := h.rec.last(t); tx.Code != custody.CodeResponseAmbiguous || !strings.Contains(resp.Header.Get("Custody-Checks"), "members=response_ambiguous") {
			t.Errorf("recorded %s, checks %s", tx.Code, resp.Header.Get("Custody-Checks"))
		}
	})
	t.Run("usage", func(t *testing.T) {
		h := newHarness(t, testConfig)
		h.primary.mutate = func(m map[string]any, _ *http.Request) {
			m["usage"] = map[string]any{"prompt_tokens": 8, "Prompt_tokens": 1, "completion_tokens": 2}
		}
		resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false))
		if resp.StatusCode != 502 || errCode(t, body) != string(custody.CodeResponseAmbiguous) {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("stream chunk", func(t *testing.T) {
		h := newHarness(t, testConfig)
		h.primary.stream = func(w io.Writer, id string, usage int) {
			io.WriteString(w, streamChunk(id, "small", 1, "a"))
			fmt.Fprintf(w, "data: {\"id\":%q,\"created\":1,\"model\":\"evil\",\"Model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n", id)
			io.WriteString(w, usageChunk(id, "small", 1, usage))
			io.WriteString(w, "data: [DONE]\n\n")
		}
		_, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
		if strings.Contains(body, "[DONE]") || strings.Contains(body, `"content":"b"`) || !strings.Contains(body, `"code":"response_ambiguous"`) {
			t.Fatalf("stream body: %s", body)
		}
		if tx := h.rec.last(t); tx.Code != custody.CodeResponseAmbiguous {
			t.Errorf("recorded %s", tx.Code)
		}
	})
}

// embeddingsUpstream makes the fake answer embeddings as engines do:
// no id, the same bytes for the same input.
func embeddingsUpstream(t *testing.T, f *fakeUpstream) {
	f.mutate = func(m map[string]any, r *http.Request) {
		var req struct{ Input string }
		json.Unmarshal(*f.body.Load(), &req)
		for k := range m {
			delete(m, k)
		}
		n := o200k(t).Count(req.Input)
		m["object"], m["model"] = "list", "small"
		m["data"] = []any{map[string]any{"object": "embedding", "index": 0, "embedding": []float64{float64(len(req.Input)), 0.5}}}
		m["usage"] = map[string]any{"prompt_tokens": n, "total_tokens": n}
	}
}

// TestReplaySameAnswerSameRequest: the same embeddings input from two
// tenants gets the same bytes, and passes; the same bytes as the answer
// to another input are a replay, and the refusal names no request.
func TestReplaySameAnswerSameRequest(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared index %v", shared), func(t *testing.T) {
			h := newHarness(t, testConfig)
			if shared {
				idx, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "index.db"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { idx.Close() })
				h.gw.sharedReplay = idx.ClaimResponse
				// Another replica's memory: only the index knows.
				h.gw.replay = check.NewReplay(time.Hour, 1000)
			}
			embeddingsUpstream(t, h.primary)
			in := `{"model":"small","input":"the same words"}`
			var first string
			for _, key := range []string{"sk-acme", "sk-beta", "sk-acme"} {
				if shared {
					h.gw.replay = check.NewReplay(time.Hour, 1000) // each request "through another replica"
				}
				resp, body := h.do("POST", "/v1/embeddings", key, in)
				if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "verified" {
					t.Fatalf("%s: %d %s %s", key, resp.StatusCode, resp.Header.Get("Custody-Checks"), body)
				}
				if first == "" {
					first = resp.Header.Get("Custody-Request-Id")
				}
			}
			// Another input answered with the very same bytes.
			h.primary.mutate = nil
			embeddingsUpstream(t, h.primary)
			inner := h.primary.mutate
			h.primary.mutate = func(m map[string]any, r *http.Request) {
				*h.primary.body.Load() = []byte(in) // answer as if asked `in`
				inner(m, r)
			}
			if shared {
				h.gw.replay = check.NewReplay(time.Hour, 1000)
			}
			resp, body := h.do("POST", "/v1/embeddings", "sk-beta", `{"model":"small","input":"other words!!"}`)
			if resp.StatusCode != 502 || errCode(t, body) != string(custody.CodeResponseReplayed) {
				t.Fatalf("same answer to another request: %d %s", resp.StatusCode, body)
			}
			if strings.Contains(body, first) || strings.Contains(resp.Header.Get("Custody-Checks"), first) {
				t.Errorf("the refusal names another tenant's request: %s", body)
			}
			if tx := h.rec.last(t); strings.Contains(fmt.Sprint(tx.Outcomes), first) {
				t.Errorf("the leaf names another tenant's request: %v", tx.Outcomes)
			}
		})
	}
}

// TestUpstreamContextOverflowDialects: every engine's way of refusing an
// over-long prompt reaches the client as 400 context_length_exceeded with
// the upstream's figures, also when policy forbids fallback.
func TestUpstreamContextOverflowDialects(t *testing.T) {
	for _, tc := range []struct{ name, body, figures string }{
		{"openai", `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130415 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, "130415 prompt tokens for a context of 128000"},
		{"llama.cpp", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5210,"n_ctx":4096}}`, "5210 prompt tokens for a context of 4096"},
		{"vllm", `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5210 tokens (5110 in the messages, 100 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, "5210 prompt tokens for a context of 4096"},
	} {
		for _, useCase := range []string{"", "code"} { // code: the strict policy, no fallback
			t.Run(tc.name+"/"+useCase, func(t *testing.T) {
				h := newHarness(t, testConfig)
				h.primary.status, h.primary.errBody = 400, tc.body
				h.backup.status, h.backup.errBody = 400, tc.body
				var hdr []string
				if useCase != "" {
					hdr = []string{"Custody-Use-Case", useCase}
				}
				resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), hdr...)
				if resp.StatusCode != 400 || errCode(t, body) != string(custody.CodeContextLengthExceeded) || !strings.Contains(body, tc.figures) {
					t.Fatalf("%d %s", resp.StatusCode, body)
				}
			})
		}
	}
}

// TestUpstream5xxMessagePassedOn: the upstream's reason reaches the
// client, without its key or other credentials.
func TestUpstream5xxMessagePassedOn(t *testing.T) {
	h := newHarness(t, testConfig)
	h.primary.status = 500
	h.primary.errBody = `{"error":{"message":"CUDA out of memory (key sk-upstream-secret, db postgres://u:pw@10.0.0.1/x)","type":"server_error"}}`
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false))
	if resp.StatusCode != 502 || errCode(t, body) != string(custody.CodeUpstreamUnavailable) || !strings.Contains(body, "answered HTTP 500: CUDA out of memory") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for _, secret := range []string{"sk-upstream-secret", "pw@"} {
		if strings.Contains(body, secret) {
			t.Errorf("body leaks %q: %s", secret, body)
		}
	}
}
