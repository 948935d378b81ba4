package gateway

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplateDecidesBeforeForwarding: with a chat template, the
// rendered prompt is what capacity and refusals are judged on, before a
// byte goes upstream. A template that adds more tokens than the body has
// bytes (long tool instructions) makes a short body over capacity; a
// template's raise_exception is the engine's refusal, custody's 400.
func TestTemplateDecidesBeforeForwarding(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "chat.jinja")
	src := `{% if messages[0].role != 'user' %}{{ raise_exception('Conversation roles must start with user') }}{% endif %}` +
		strings.Repeat("You may call tools. ", 40) + `{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}`
	if err := os.WriteFile(tmpl, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, strings.Replace(testConfig, "  - name: small\n    context_window: 1000\n",
		"  - name: small\n    context_window: 120\n    chat_template: \"file:"+tmpl+"\"\n", 1))
	before := h.primary.calls.Load()

	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false))
	if resp.StatusCode != http.StatusBadRequest || errCode(t, body) != "context_length_exceeded" {
		t.Errorf("a body under capacity whose rendering is over it: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do("POST", "/v1/chat/completions", "sk-acme",
		`{"model":"small","messages":[{"role":"assistant","content":"x"}]}`)
	if resp.StatusCode != http.StatusBadRequest || errCode(t, body) != "invalid_request" ||
		!strings.Contains(body, "Conversation roles must start with user") {
		t.Errorf("a request the template refuses: %d %s", resp.StatusCode, body)
	}
	if n := h.primary.calls.Load(); n != before {
		t.Errorf("%d requests reached the upstream", n-before)
	}
}
