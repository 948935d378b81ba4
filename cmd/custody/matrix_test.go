package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// matrixCase is one simulator fault and the check that must catch it.
type matrixCase struct {
	fault  string
	stream bool
	prompt string // default: a short prompt with a nonce
	code   string // the exact code custody must answer with
	warmup bool   // the fault needs an earlier request to misuse
}

var longPrompt = strings.Repeat("the quick brown fox jumps over the lazy dog while the lighthouse keeper counts ships ", 40)

var matrix = []matrixCase{
	{fault: "placeholder-substitution", prompt: longPrompt, code: "prompt_token_mismatch", warmup: true},
	{fault: "placeholder-substitution", stream: true, prompt: longPrompt, code: "prompt_token_mismatch", warmup: true},
	{fault: "stale-kv", code: "cross_request_contamination", warmup: true},
	{fault: "stale-kv", stream: true, code: "cross_request_contamination", warmup: true},
	{fault: "response-swap", code: "response_replayed", warmup: true},
	{fault: "response-swap", stream: true, code: "response_replayed", warmup: true},
	{fault: "silent-fallback", code: "model_mismatch"},
	{fault: "silent-fallback", stream: true, code: "model_mismatch"},
	{fault: "snapshot-drift", code: "model_mismatch"},
	{fault: "snapshot-drift", stream: true, code: "model_mismatch"},
	{fault: "truncate", prompt: longPrompt, code: "prompt_token_mismatch"},
	{fault: "truncate", stream: true, prompt: longPrompt, code: "prompt_token_mismatch"},
	{fault: "stream-interleave", stream: true, code: "stream_inconsistent", warmup: true},
	{fault: "error-as-200:error-body", code: "upstream_error_as_success"},
	{fault: "error-as-200:empty-choices", code: "upstream_error_as_success"},
	{fault: "error-as-200:abort", code: "upstream_error_as_success"},
	{fault: "error-as-200:empty-length", code: "upstream_error_as_success"},
	{fault: "error-as-200:error-body", stream: true, code: "upstream_error_as_success"},
	{fault: "error-as-200:abort", stream: true, code: "upstream_error_as_success"},
	{fault: "id-echo-mismatch", code: "request_id_mismatch", warmup: true},
	{fault: "id-echo-mismatch", stream: true, code: "request_id_mismatch", warmup: true},
	{fault: "duplicate-id", code: "response_replayed", warmup: true},
	{fault: "duplicate-id", stream: true, code: "response_replayed", warmup: true},
	{fault: "stream-cut", stream: true, code: "stream_truncated"},
	{fault: "ambiguous-model", code: "response_ambiguous"},
	{fault: "ambiguous-model", stream: true, code: "response_ambiguous"},
}

// matrixConfig gives every fault its own simulator, provider and model
// (m-<fault>), plus a clean one (m-clean).
func matrixConfig() string {
	var b strings.Builder
	// Path changes would trigger canaries whose traffic the faulty
	// simulators then misuse too; the matrix wants its own requests alone.
	b.WriteString("canaries: {ignore_path_changes: true}\ntenants:\n  - {id: acme, api_keys: [sk-acme]}\n  - {id: beta, api_keys: [sk-beta]}\nproviders:\n")
	faults := map[string]bool{}
	for _, c := range matrix {
		faults[c.fault] = true
	}
	faults["clean"] = true
	names := make([]string, 0, len(faults))
	for f := range faults {
		names = append(names, f)
	}
	for _, f := range names {
		simCfg := ""
		if f != "clean" {
			simCfg = fmt.Sprintf(", sim: {faults: [%q]}", f)
		}
		fmt.Fprintf(&b, "  - {name: %q, kind: sim, request_id_echo: x-request-id%s}\n", "p-"+f, simCfg)
	}
	b.WriteString("models:\n")
	for _, f := range names {
		fmt.Fprintf(&b, "  - {name: %q, context_window: 32768, routes: [{provider: %q, model: sim-1-0827}]}\n", "m-"+f, "p-"+f)
	}
	return b.String()
}

func chatBody(model, content string, stream bool) string {
	return fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":%q}]}`, model, stream, content)
}

// outcome reads custody's code from a plain error body or from a
// stream's final error event; "" when the answer was served.
func outcome(status int, body string) string {
	if i := strings.Index(body, `"code":"`); i >= 0 && (status != 200 || !strings.Contains(body, "data: [DONE]")) {
		rest := body[i+len(`"code":"`):]
		return rest[:strings.IndexByte(rest, '"')]
	}
	return ""
}

// TestDetectionMatrix drives every simulator fault through the real
// binary and asserts the exact code; clean traffic on the same server
// stays verified.
func TestDetectionMatrix(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, matrixConfig()))
	for i, c := range matrix {
		name := c.fault
		if c.stream {
			name += "/stream"
		}
		t.Run(name, func(t *testing.T) {
			model := "m-" + c.fault
			if c.warmup {
				// An earlier request of another tenant, whose state the
				// fault will misuse.
				wr, _ := post(t, s.URL+"/v1/chat/completions", "sk-beta",
					chatBody(model, fmt.Sprintf("beta's private note z%dQ7vK2pLx9 about the merger with Northwind and its secret terms", i), c.stream))
				t.Logf("warm-up: %d %s", wr.StatusCode, wr.Header.Get("Custody-Checks"))
			}
			prompt := c.prompt
			if prompt == "" {
				prompt = fmt.Sprintf("acme asks: summarise a%dB4nR8wT1c for the board", i)
			}
			resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody(model, prompt, c.stream))
			got := outcome(resp.StatusCode, body)
			if got != c.code {
				t.Fatalf("fault %s: got code %q (status %d, checks %s), want %q\n%.600s", c.fault, got, resp.StatusCode, resp.Header.Get("Custody-Checks"), c.code, body)
			}
			if v := resp.Header.Get("Custody-Verdict"); !c.stream && v != "rejected" {
				t.Errorf("verdict header %q", v)
			}
		})
	}
	t.Run("clean traffic stays verified", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for i := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := []string{"sk-acme", "sk-beta"}[i%2]
				resp, body := post(t, s.URL+"/v1/chat/completions", key, chatBody("m-clean", fmt.Sprintf("clean request %d c%dX7mQ2rT9", i, i), i%3 == 0))
				if resp.StatusCode != 200 || outcome(resp.StatusCode, body) != "" {
					errs <- fmt.Sprintf("%d: %s", resp.StatusCode, body)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})
}
