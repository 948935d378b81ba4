package gateway

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestStreamCutFinalEvent: a final event without its blank line ends the
// stream if its dialect reads it as the terminal event ("data: [DONE]"
// at the end of the input); anything else cut short is stream_truncated.
func TestStreamCutFinalEvent(t *testing.T) {
	for _, tc := range []struct {
		name, tail, verdict string
	}{
		{"terminal event without its newline", "data: [DONE]", "verified"},
		{"a chunk cut in half", `data: {"id":"x","obj`, "stream=stream_truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig)
			h.primary.stream = func(w io.Writer, id string, usage int) {
				fmt.Fprintf(w, "data: {\"id\":%q,\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n", id)
				fmt.Fprintf(w, "data: {\"id\":%q,\"created\":1,\"model\":\"small\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1}}\n\n", id, usage)
				io.WriteString(w, tc.tail)
			}
			resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
			got := resp.Trailer.Get("Custody-Verdict") + " " + resp.Trailer.Get("Custody-Checks")
			if !strings.Contains(got, tc.verdict) {
				t.Errorf("trailers %q, want %q in them\n%s", got, tc.verdict, body)
			}
			if tc.verdict == "verified" != strings.HasSuffix(body, "data: [DONE]\n\n") {
				t.Errorf("end of the stream:\n%s", body)
			}
		})
	}
}
