package gateway

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestStreamErrorEventKeepsEngineMessage: an error event llama.cpp sends
// inside a 200 stream (a tool-call parse failure) ends the client's
// stream as upstream_error_as_success with the engine's own message,
// sanitised (the provider's key redacted), as a refusal before the
// stream would have carried it; the ledger keeps custody's words only.
func TestStreamErrorEventKeepsEngineMessage(t *testing.T) {
	h := newHarness(t, testConfig)
	h.primary.stream = func(w io.Writer, id string, usage int) {
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"x\"}}]}\n\n")
		fmt.Fprintf(w, "data: {\"error\":{\"code\":500,\"message\":\"The model produced output that does not match the expected peg-native format (key sk-upstream-secret)\",\"type\":\"server_error\"}}\n\n")
	}
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
	if resp.StatusCode != 200 || !strings.Contains(body, "upstream_error_as_success") ||
		!strings.Contains(body, "does not match the expected peg-native format") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if strings.Contains(body, "sk-upstream-secret") {
		t.Errorf("the provider's key reached the client: %s", body)
	}
	tx := h.rec.last(t)
	for _, o := range tx.Outcomes {
		if strings.Contains(o.Detail, "peg-native") {
			t.Errorf("the engine's message is in the ledger: %+v", o)
		}
	}
}
