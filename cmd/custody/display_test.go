package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestThinkingDisplayOmitted: a Messages request with thinking.display
// omitted, translated to the simulator (which reasons when thinking is
// on), gets its thinking block with an empty thinking, plainly and
// streamed (no thinking_delta), as Anthropic answers it; the reasoning
// reaches the client nowhere, the answer is verified, and the
// translation outcome says thinking.display was carried. Without
// display, the same request gets the reasoning (the simulator did
// reason).
func TestThinkingDisplayOmitted(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := agentServe(t)
	const reasoning = "answering" // a word of the simulator's reasoning
	for _, tc := range []struct {
		display string
		omit    bool
	}{{`,"display":"omitted"`, true}, {"", false}} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("omit=%v stream=%v", tc.omit, stream), func(t *testing.T) {
				body := fmt.Sprintf(`{"model":"sim-1","max_tokens":64,"stream":%v,"thinking":{"type":"adaptive"%s},"messages":[{"role":"user","content":"hi"}]}`, stream, tc.display)
				resp, out := post(t, s.URL+"/v1/messages", "", body, "anthropic-version", "2023-06-01")
				checks, verdict := resp.Header.Get("Custody-Checks"), resp.Header.Get("Custody-Verdict")
				if stream {
					checks, verdict = resp.Trailer.Get("Custody-Checks"), resp.Trailer.Get("Custody-Verdict")
				}
				if resp.StatusCode != 200 || verdict != "verified" {
					t.Fatalf("%d, verdict %q, checks %q\n%s", resp.StatusCode, verdict, checks, out)
				}
				carried := strings.Contains(checks, "carried:thinking,thinking.display")
				if carried != tc.omit || strings.Contains(checks, "ignored") {
					t.Errorf("Custody-Checks %q: thinking.display carried %v, want %v", checks, carried, tc.omit)
				}
				if got := strings.Contains(out, reasoning); got == tc.omit {
					t.Errorf("the reasoning in what the client read: %v, want %v\n%s", got, !tc.omit, out)
				}
				var block string
				if stream {
					if got := strings.Contains(out, "thinking_delta"); got == tc.omit {
						t.Errorf("thinking_delta events: %v, want %v\n%s", got, !tc.omit, out)
					}
					for _, line := range strings.Split(out, "\n") {
						if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"content_block_start"`) && strings.Contains(line, `"thinking"`) {
							block = strings.TrimPrefix(line, "data: ")
						}
					}
					var ev struct {
						ContentBlock json.RawMessage `json:"content_block"`
					}
					if json.Unmarshal([]byte(block), &ev) == nil {
						block = string(ev.ContentBlock)
					}
				} else {
					var m struct {
						Content []json.RawMessage `json:"content"`
					}
					if err := json.Unmarshal([]byte(out), &m); err != nil || len(m.Content) == 0 {
						t.Fatalf("%v: %s", err, out)
					}
					block = string(m.Content[0])
				}
				var b struct {
					Type      string  `json:"type"`
					Thinking  *string `json:"thinking"`
					Signature *string `json:"signature"`
				}
				if json.Unmarshal([]byte(block), &b) != nil || b.Type != "thinking" || b.Thinking == nil || b.Signature == nil {
					t.Fatalf("no thinking block with thinking and signature: %s\n%s", block, out)
				}
				if tc.omit && (*b.Thinking != "" || *b.Signature != "") {
					t.Errorf("thinking block %s, want thinking and signature empty", block)
				}
			})
		}
	}
}

// TestScanOmittedThinking: reasoning custody does not relay (thinking
// display omitted) is still the upstream's answer, read and scanned by
// the chat checks: another tenant's prompt text in it is
// cross_request_contamination, plainly and streamed, and the text
// reaches the client in neither.
func TestScanOmittedThinking(t *testing.T) {
	t.Parallel() // its own data dir and ports
	tp, s := startScan(t, "")
	for i, stream := range []bool{false, true} {
		n := 100 + i
		secret, _ := leakSecret(t, s, tp, n)
		body := string(jsonOf(map[string]any{"model": "m-tamper", "max_tokens": 12, "stream": stream,
			"thinking": map[string]any{"type": "adaptive", "display": "omitted"},
			"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("Tell me a short story about a lighthouse. case:reasoning_content:%d", n)}}}))
		status, out, checks, _ := exchangeAt(t, s.URL, "/v1/messages", "sk-acme", body)
		wantCaught(t, fmt.Sprint("stream=", stream), status, out, checks)
		if strings.Contains(out, "courier passphrase") || strings.Contains(out, secret) {
			t.Errorf("stream=%v: the leaked text reached the client\n%s", stream, out)
		}
	}
}
