package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

// TestRecordedStringsBounded: whatever an upstream or a client puts in
// a response's identity or a refusal's words, every string of the
// transaction they choose, every outcome detail included, is recorded
// within custody.BoundLimit, and a response whose id, model or
// system_fingerprint is over it is refused as the upstream's fault
// before anything is relayed.
func TestRecordedStringsBounded(t *testing.T) {
	h := newHarness(t, testConfig)
	long := strings.Repeat("L", 70<<10)
	near := strings.Repeat("m", 250) // within the limit; a detail quoting it is not
	for _, tc := range []struct {
		name     string
		body     string
		mutate   func(resp map[string]any, _ *http.Request)
		stream   func(w io.Writer, id string, usage int)
		wantCode custody.Code
	}{
		{name: "long id", body: chat("small", "hi", false), wantCode: custody.CodeUpstreamErrorAsSuccess,
			mutate: func(resp map[string]any, _ *http.Request) { resp["id"] = long }},
		{name: "long model", body: chat("small", "hi", false), wantCode: custody.CodeUpstreamErrorAsSuccess,
			mutate: func(resp map[string]any, _ *http.Request) { resp["model"] = long }},
		{name: "long fingerprint", body: chat("small", "hi", false), wantCode: custody.CodeUpstreamErrorAsSuccess,
			mutate: func(resp map[string]any, _ *http.Request) { resp["system_fingerprint"] = long }},
		{name: "foreign model quoted in the detail", body: chat("small", "hi", false), wantCode: custody.CodeModelMismatch,
			mutate: func(resp map[string]any, _ *http.Request) { resp["model"] = near }},
		{name: "long error message as a 200", body: chat("small", "hi", false), wantCode: custody.CodeUpstreamErrorAsSuccess,
			mutate: func(resp map[string]any, _ *http.Request) {
				delete(resp, "choices")
				resp["error"] = map[string]any{"message": long, "type": long}
			}},
		{name: "long stream model", body: chat("small", "hi", true), wantCode: custody.CodeUpstreamErrorAsSuccess,
			stream: func(w io.Writer, id string, usage int) {
				fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n", id, long)
				fmt.Fprint(w, "data: [DONE]\n\n")
			}},
		{name: "foreign stream model quoted in the detail", body: chat("small", "hi", true), wantCode: custody.CodeModelMismatch,
			stream: func(w io.Writer, id string, usage int) {
				fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n", id, near)
				fmt.Fprint(w, "data: [DONE]\n\n")
			}},
		{name: "long requested model", body: chat(long[:3000], "hi", false), wantCode: custody.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.primary.mutate, h.primary.stream = tc.mutate, tc.stream
			resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", tc.body)
			if strings.Contains(body, "data:") || len(body) > 2048 {
				t.Errorf("%d: the client read %d bytes: %.200s", resp.StatusCode, len(body), body)
			}
			tx := h.rec.last(t)
			if tx.ID != resp.Header.Get("Custody-Request-Id") || tx.Code != tc.wantCode {
				t.Fatalf("recorded %s %s, want %s (%d %.200s)", tx.ID, tx.Code, tc.wantCode, resp.StatusCode, body)
			}
			strs := map[string]string{"requested_model": tx.RequestedModel, "response_model": tx.ResponseModel,
				"system_fingerprint": tx.Fingerprint, "response_id": tx.ResponseID, "use_case": tx.UseCase}
			for _, o := range tx.Outcomes {
				strs[o.Check+" detail"] = o.Detail
			}
			for name, s := range strs {
				if len(s) > custody.BoundLimit {
					t.Errorf("%s recorded with %d bytes", name, len(s))
				}
			}
			for _, v := range resp.Header {
				if len(v[0]) > custody.BoundLimit*2 {
					t.Errorf("a header of %d bytes", len(v[0]))
				}
			}
		})
	}
}
