package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// exactPrompt is a chat request whose prompt llama.cpp counts as exactly
// n tokens (its own /apply-template and /tokenize), found by adjusting
// the number of filler words; ok is false if no word count lands on n.
func exactPrompt(t *testing.T, l *llama, n int) (string, bool) {
	t.Helper()
	body := func(words int, tail string) string {
		return fmt.Sprintf(`{"model":%q,"max_tokens":1,"messages":[{"role":"user","content":%q}]}`, l.model, strings.Repeat("river ", words)+"end"+tail)
	}
	words := n
	for range 8 {
		got := l.promptTokens(t, []byte(body(words, "")))
		if got == n {
			return body(words, ""), true
		}
		words += n - got
	}
	for _, tail := range []string{".", "!", " ok", " ok."} {
		for _, w := range []int{words - 1, words, words + 1} {
			if l.promptTokens(t, []byte(body(w, tail))) == n {
				return body(w, tail), true
			}
		}
	}
	return "", false
}

// capacityOutcomes are the capacity check's outcomes in Custody-Checks.
func capacityOutcomes(checks string) []string {
	var out []string
	for _, c := range strings.Split(checks, ";") {
		if strings.HasPrefix(c, "capacity=") {
			out = append(out, c)
		}
	}
	return out
}

// TestEngineContextBoundary: llama.cpp admits a prompt of fewer tokens
// than its context (it needs room for one generated token). Configured
// with the served context, custody forwards a prompt of n_ctx - 1 tokens
// (verified, counted exactly) and refuses one of exactly n_ctx itself,
// with one capacity outcome. An engine started with a smaller context
// than configured refuses what custody forwards: a clear 400
// context_length_exceeded, one capacity outcome, and custody doctor
// reports the configured window as a problem.
func TestEngineContextBoundary(t *testing.T) {
	t.Parallel() // its own llama-servers, data dir and ports
	if testing.Short() {
		t.Skip("starts llama-server")
	}
	l := startLlama(t, "qwen3", 2048)
	if l.NCtx != 2048 {
		t.Fatalf("llama-server serves n_ctx %d, started with -c 2048", l.NCtx)
	}
	dir := t.TempDir()
	cfg := engineConfig(t, l.NCtx, l) +
		fmt.Sprintf("  - {name: big, context_window: 8192, tokenizer: %q, routes: [{provider: llama0, model: qwen3}]}\n", "file:"+engineTokenizer(t, "qwen3"))
	s := startServe(t, dir, "--config", writeConfig(t, dir, cfg))

	under, ok := exactPrompt(t, l, l.NCtx-1)
	if !ok {
		t.Fatal("no prompt of n_ctx-1 tokens found")
	}
	r := sendEngine(t, s, "/v1/chat/completions", under, false)
	if r.status != 200 || r.verdict != "verified" {
		t.Errorf("n_ctx-1 tokens: HTTP %d, verdict %q, checks %q: %.300s", r.status, r.verdict, r.checks, r.body)
	} else if local, reported := leafCounts(t, s, r.id); local != l.NCtx-1 || reported != l.NCtx-1 {
		t.Errorf("n_ctx-1 tokens: custody counted %d, llama.cpp %d, want %d", local, reported, l.NCtx-1)
	}

	at, ok := exactPrompt(t, l, l.NCtx)
	if !ok {
		t.Fatal("no prompt of n_ctx tokens found")
	}
	// llama.cpp itself refuses it.
	if st := l.postJSON(t, "/v1/chat/completions", []byte(at), nil); st != 400 {
		t.Errorf("llama.cpp answered a prompt of n_ctx tokens with HTTP %d, not 400", st)
	}
	for _, stream := range []bool{false, true} {
		r = sendEngine(t, s, "/v1/chat/completions", at, stream)
		// custody's own refusal (never forwarded), not llama.cpp's passed on.
		if r.status != 400 || !strings.Contains(r.body, "context_length_exceeded") || !strings.Contains(r.body, "needs room for one generated token") {
			t.Errorf("n_ctx tokens, stream=%v: HTTP %d %.300s", stream, r.status, r.body)
		}
		if got := capacityOutcomes(r.checks); len(got) != 1 || got[0] != "capacity=context_length_exceeded" {
			t.Errorf("n_ctx tokens, stream=%v: capacity outcomes %v (checks %q)", stream, got, r.checks)
		}
	}

	// Configured as 8192 on an engine holding 2048: forwarded, refused by
	// the engine, one outcome.
	over := strings.Replace(at, `"model":"qwen3"`, `"model":"big"`, 1)
	over = strings.Replace(over, "end", strings.Repeat("river ", 600)+"end", 1)
	for _, stream := range []bool{false, true} {
		r = sendEngine(t, s, "/v1/chat/completions", over, stream)
		if r.status != 400 || !strings.Contains(r.body, "context_length_exceeded") {
			t.Errorf("2,600 tokens to a 2,048 engine configured as 8,192, stream=%v: HTTP %d %.300s", stream, r.status, r.body)
		}
		if got := capacityOutcomes(r.checks); len(got) != 1 || got[0] != "capacity=context_length_exceeded" {
			t.Errorf("smaller engine, stream=%v: capacity outcomes %v (checks %q)", stream, got, r.checks)
		}
	}

	// custody doctor sees the served context (n_ctx), not the trained one.
	code, out, errOut := runCmd(t, dir, "doctor", "--config", "custody.yaml", "--json")
	var findings []struct {
		Check, Provider, Model, Status, Detail, Fix string
	}
	if err := json.Unmarshal([]byte(out), &findings); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errOut)
	}
	problem, rendering := false, ""
	for _, f := range findings {
		if f.Check == "context_window" && f.Model == "big" && f.Status == "problem" && strings.Contains(f.Detail, "2048") {
			problem = true
		}
		if f.Check == "context_window" && f.Model == "qwen3" && f.Status != "ok" {
			t.Errorf("doctor: the model configured as the served context: %+v", f)
		}
		if f.Check == "llamacpp_rendering" {
			rendering = f.Detail
		}
	}
	if code != 1 || !problem {
		t.Errorf("doctor exit %d, no context_window problem for big (8192 configured, 2048 served):\n%s", code, out)
	}
	if !strings.Contains(rendering, "llamacpp-stream") {
		t.Errorf("doctor did not report llama.cpp's rendering as llamacpp-stream: %q", rendering)
	}
}
