package gateway

import (
	"net/http"
	"strings"
	"testing"
)

// TestChoicesAsked: a chat answer with more choices than the request's n
// is upstream_error_as_success; as many as asked is fine; legacy
// completions, whose choices are n for each of several prompts, are not
// held to n.
func TestChoicesAsked(t *testing.T) {
	h := newHarness(t, testConfig)
	twoChoices := func(resp map[string]any) {
		c := resp["choices"].([]any)[0].(map[string]any)
		second := map[string]any{}
		for k, v := range c {
			second[k] = v
		}
		second["index"] = 1
		resp["choices"] = []any{c, second}
	}
	h.primary.mutate = func(resp map[string]any, _ *http.Request) { twoChoices(resp) }
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false))
	if resp.StatusCode != 502 || !strings.Contains(body, "upstream_error_as_success") {
		t.Errorf("two choices where one was asked: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do("POST", "/v1/chat/completions", "sk-acme", `{"model":"small","n":2,"messages":[{"role":"user","content":"hi"}]}`)
	if strings.Contains(resp.Header.Get("Custody-Checks"), "shape=upstream_error_as_success") {
		t.Errorf("two choices where two were asked: %d %s %s", resp.StatusCode, resp.Header.Get("Custody-Checks"), body)
	}
	h.primary.mutate = func(resp map[string]any, _ *http.Request) {
		twoChoices(resp)
		for _, c := range resp["choices"].([]any) {
			c := c.(map[string]any)
			delete(c, "message")
			c["text"] = "x"
		}
		resp["object"] = "text_completion"
	}
	resp, body = h.do("POST", "/v1/completions", "sk-acme", `{"model":"small","prompt":["a","b"],"max_tokens":1}`)
	if strings.Contains(resp.Header.Get("Custody-Checks"), "shape=upstream_error_as_success") || strings.Contains(body, "choices where") {
		t.Errorf("completions of two prompts: %d %s %s", resp.StatusCode, resp.Header.Get("Custody-Checks"), body)
	}
}
