package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestAdmissionByEngine: the preflight holds a prompt to its route's
// engine's own rule. Under vLLM the prompt and max_tokens must fit the
// capacity together: a short prompt asking for nearly the whole window is
// refused before forwarding, the same prompt with a small max_tokens (or
// none) is forwarded.
func TestAdmissionByEngine(t *testing.T) {
	cfg := strings.Replace(testConfig, "{name: primary, kind: openai,", "{name: primary, kind: openai, engine: vllm,", 1)
	h := newHarness(t, cfg)
	prompt := strings.Repeat("word ", 200) // ~200 tokens, over 1000 bytes
	body := func(maxTokens string) string {
		return fmt.Sprintf(`{"model":"small","messages":[{"role":"user","content":%q}]%s}`, prompt, maxTokens)
	}
	before := h.primary.calls.Load()
	resp, out := h.do("POST", "/v1/chat/completions", "sk-acme", body(`,"max_tokens":900`))
	if resp.StatusCode != http.StatusBadRequest || errCode(t, out) != "context_length_exceeded" || !strings.Contains(out, "max_tokens") {
		t.Errorf("prompt + max_tokens over the capacity: %d %s", resp.StatusCode, out)
	}
	if n := h.primary.calls.Load(); n != before {
		t.Errorf("forwarded %d times", n-before)
	}
	for _, mt := range []string{`,"max_tokens":16`, `,"max_completion_tokens":16`, ``} {
		if resp, out := h.do("POST", "/v1/chat/completions", "sk-acme", body(mt)); resp.StatusCode != http.StatusOK {
			t.Errorf("max %q: %d %s", mt, resp.StatusCode, out)
		}
	}
}
