package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

// TestStreamOverMaxBytesEnds: an upstream stream longer than
// limits.max_stream_bytes is ended with one response_too_large error
// event and no [DONE], and recorded as rejected; one under it is whole.
func TestStreamOverMaxBytesEnds(t *testing.T) {
	const limit = 8192
	h := newHarness(t, strings.Replace(testConfig, "limits: {max_body_bytes: 4096}", fmt.Sprintf("limits: {max_body_bytes: 4096, max_stream_bytes: %d}", limit), 1))
	chunks := 0
	h.primary.stream = func(w io.Writer, id string, usage int) {
		for i := 0; i < chunks; i++ {
			fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%04d \"}}]}\n\n", id, i)
		}
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", id)
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", id, usage, chunks, usage+chunks)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
	stream := func() string {
		req, _ := http.NewRequest("POST", h.srv.URL+"/v1/chat/completions", strings.NewReader(chat("small", "hi", true)))
		req.Header.Set("Authorization", "Bearer sk-acme")
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	chunks = 10 // ~1.3 KB
	if body := stream(); !strings.Contains(body, "data: [DONE]") || strings.Contains(body, `"error"`) {
		t.Fatalf("a stream under the limit was not relayed whole:\n%s", body)
	}
	chunks = 200 // ~26 KB
	body := stream()
	if strings.Contains(body, "[DONE]") {
		t.Error("a stream over the limit ended with [DONE]")
	}
	if n := strings.Count(body, `"error"`); n != 1 || !strings.Contains(body, `"code":"response_too_large"`) || !strings.Contains(body, "max_stream_bytes") {
		t.Errorf("want one response_too_large error event naming the limit, got %d errors:\n%s", n, body[max(0, len(body)-600):])
	}
	if strings.Contains(body, "word0199") {
		t.Error("the stream was relayed to its end")
	}
	if len(body) > limit+2048 {
		t.Errorf("%d bytes relayed, limit %d", len(body), limit)
	}
	if tx := h.rec.last(t); tx.Verdict != custody.Rejected || tx.Code != custody.CodeResponseTooLarge {
		t.Errorf("recorded %s %s", tx.Verdict, tx.Code)
	}
}
