package gateway

import (
	"net/http"
	"testing"
)

// TestCheckList: Options.Checks names the checks that run; an empty list
// runs none (the benchmarks' proxy path), and what is not listed neither
// rejects nor appears in Custody-Checks.
func TestCheckList(t *testing.T) {
	lie := func(resp map[string]any, _ *http.Request) { resp["model"] = "another-model" }
	for _, tc := range []struct {
		name   string
		checks []string
		status int
		header string
	}{
		{"every check", nil, 502, "capacity=ok;request_id=ok;shape=ok;model=model_mismatch;replay=ok;prompt_tokens=ok;contract=ok"},
		{"none", []string{}, 200, "capacity=ok"},
		{"replay only", []string{"replay"}, 200, "capacity=ok;replay=ok"},
		{"model only", []string{"model"}, 502, "capacity=ok;model=model_mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessWith(t, testConfig, func(o *Options) { o.Checks = tc.checks })
			h.primary.mutate = lie
			for _, stream := range []bool{false, true} {
				if stream && tc.status == 502 {
					continue // a stream's model is checked on its first chunk: the same outcome
				}
				resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", stream))
				if resp.StatusCode != tc.status {
					t.Fatalf("stream %v: status %d, want %d: %s", stream, resp.StatusCode, tc.status, body)
				}
				got := resp.Header.Get("Custody-Checks")
				if stream {
					got = resp.Trailer.Get("Custody-Checks")
				}
				if got != tc.header {
					t.Errorf("stream %v: Custody-Checks %q, want %q", stream, got, tc.header)
				}
			}
		})
	}
}
