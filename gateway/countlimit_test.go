package gateway

import (
	"strings"
	"testing"
)

// TestCountBodyLimit: count_tokens and input_tokens read their body as the
// exchange does: a body over limits.max_body_bytes is 413
// request_too_large, in the endpoint's own error shape.
func TestCountBodyLimit(t *testing.T) {
	h := newHarness(t, testConfig)
	big := `{"model":"gpt-4o","input":"` + strings.Repeat("x", 8192) + `"}`
	for _, path := range []string{"/v1/messages/count_tokens", "/v1/responses/input_tokens"} {
		resp, body := h.do("POST", path, "sk-acme", big)
		if resp.StatusCode != 413 || !strings.Contains(body, "request_too_large") {
			t.Errorf("POST %s over the body limit: %d %s, want 413 request_too_large", path, resp.StatusCode, body)
		}
	}
}
