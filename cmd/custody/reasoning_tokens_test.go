package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// reasoningUpstream is the simulator reporting, as vLLM, DeepSeek and
// OpenRouter do, completion_tokens_details.reasoning_tokens in the usage
// of a chat completion whose request asked for reasoning: reasoning
// tokens of the simulator's reasoning (5 words, 5 or more tokens).
func reasoningUpstream(t *testing.T, reasoning int) string {
	t.Helper()
	sim := toySim(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		if r.URL.Path == "/v1/chat/completions" && bytes.Contains(body, []byte(`"reasoning_effort"`)) {
			out = bytes.ReplaceAll(out, []byte(`"total_tokens":`),
				fmt.Appendf(nil, `"completion_tokens_details":{"reasoning_tokens":%d},"total_tokens":`, reasoning))
		}
		writeRecorded(w, rec, out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestResponsesReasoningTokens: a translated Responses request's
// usage.output_tokens_details.reasoning_tokens is the count the chat
// upstream reported, plainly and streamed (response.completed), the
// answer verified; where the upstream reports none, it is 0 (custody
// counts none of its own). Before, it was 0 whatever the upstream said.
func TestResponsesReasoningTokens(t *testing.T) {
	t.Parallel() // its own data dir and ports
	const reported = 4
	dir := t.TempDir()
	cfg := `
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: chatwire, kind: openai, base_url: "UPSTREAM", timeout: 20s}
models:
  - {name: m-reason, tokenizer: o200k_base, chat_template: builtin:chatml, context_window: 32768, routes: [{provider: chatwire, model: sim-1}]}
`
	s := startServe(t, dir, "--config", writeConfig(t, dir, strings.Replace(cfg, "UPSTREAM", reasoningUpstream(t, reported), 1)))
	for _, tc := range []struct {
		name, reasoning string
		want            int
	}{{"reported", `,"reasoning":{"effort":"low"}`, reported}, {"not asked, not reported", "", 0}} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", tc.name, stream), func(t *testing.T) {
				resp, out := post(t, s.URL+"/v1/responses", "sk-acme", fmt.Sprintf(`{"model":"m-reason","input":"hi","max_output_tokens":64,"stream":%v%s}`, stream, tc.reasoning))
				verdict, body := resp.Header.Get("Custody-Verdict"), []byte(out)
				if stream {
					verdict = resp.Trailer.Get("Custody-Verdict")
					body = nil
					for _, line := range strings.Split(out, "\n") {
						if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"response.completed"`) {
							var ev struct {
								Response json.RawMessage `json:"response"`
							}
							_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev)
							body = ev.Response
						}
					}
				}
				if resp.StatusCode != 200 || verdict != "verified" {
					t.Fatalf("%d, verdict %q\n%s", resp.StatusCode, verdict, out)
				}
				var r struct {
					Output []struct{ Type string }
					Usage  *struct {
						OutputTokens        int `json:"output_tokens"`
						OutputTokensDetails *struct {
							ReasoningTokens *int `json:"reasoning_tokens"`
						} `json:"output_tokens_details"`
					}
				}
				if err := json.Unmarshal(body, &r); err != nil || r.Usage == nil || r.Usage.OutputTokensDetails == nil || r.Usage.OutputTokensDetails.ReasoningTokens == nil {
					t.Fatalf("no usage.output_tokens_details.reasoning_tokens (%v)\n%s", err, out)
				}
				if got := *r.Usage.OutputTokensDetails.ReasoningTokens; got != tc.want {
					t.Errorf("reasoning_tokens %d, want %d (output_tokens %d)", got, tc.want, r.Usage.OutputTokens)
				}
				if reasoned := len(r.Output) > 0 && r.Output[0].Type == "reasoning"; reasoned != (tc.want > 0) {
					t.Errorf("a reasoning item: %v, want %v\n%s", reasoned, tc.want > 0, out)
				}
			})
		}
	}
}
