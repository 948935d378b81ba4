package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// wireConfig serves model m-<name> from a sim provider with its own
// faults and token delay.
func wireConfig(provs ...string) string {
	var b strings.Builder
	b.WriteString("checks: {contamination_warmup: -1}\ncanaries: {ignore_path_changes: true}\ntenants:\n  - {id: acme, api_keys: [sk-acme]}\n  - {id: beta, api_keys: [sk-beta]}\nproviders:\n")
	for _, p := range provs {
		name, opts, _ := strings.Cut(p, "=")
		fmt.Fprintf(&b, "  - {name: %q, kind: sim, request_id_echo: x-request-id, sim: {%s}}\n", "p-"+name, opts)
	}
	b.WriteString("models:\n")
	for _, p := range provs {
		name, _, _ := strings.Cut(p, "=")
		fmt.Fprintf(&b, "  - {name: %q, context_window: 32768, routes: [{provider: %q, model: sim-1}]}\n", "m-"+name, "p-"+name)
	}
	return b.String()
}

// rawStream posts a streaming request and returns the response (trailers
// read) and its lines.
func rawStream(t *testing.T, url, key, body string) (*http.Response, []string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, sseLines(string(b))
}

// TestWireStreamTickingCreated: a stream whose created rises chunk by
// chunk (the simulator stamps each chunk with the current second, as
// llama.cpp does, and a token delay makes the stream span seconds) is
// verified. The go-openai SDK reads it; a raw client finds the receipt
// and verdict comments before [DONE]; headers say pending, trailers the
// verdict.
func TestWireStreamTickingCreated(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, wireConfig("slow=token_delay: 300ms")))
	body := `{"model":"m-slow","stream":true,"max_tokens":6,"messages":[{"role":"user","content":"count the ships in the harbour"}]}`
	resp, lines := rawStream(t, s.URL, "sk-acme", body)
	id := resp.Header.Get("Custody-Request-Id")
	n := len(lines)
	if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "pending" || n < 4 {
		t.Fatalf("%d %v %q", resp.StatusCode, resp.Header, lines)
	}
	if lines[n-1] != "data: [DONE]" || lines[n-2] != ": custody-verdict verified checks="+resp.Trailer.Get("Custody-Checks") || lines[n-3] != ": custody-receipt "+id {
		t.Fatalf("stream ends %q (trailer checks %q)", lines[max(n-4, 0):], resp.Trailer.Get("Custody-Checks"))
	}
	if resp.Trailer.Get("Custody-Verdict") != "verified" {
		t.Errorf("trailer verdict %q", resp.Trailer.Get("Custody-Verdict"))
	}
	created := map[int64]bool{}
	for _, l := range lines {
		var c struct{ Created int64 }
		if d, ok := strings.CutPrefix(l, "data: {"); ok && json.Unmarshal([]byte("{"+d), &c) == nil {
			created[c.Created] = true
		}
	}
	if len(created) < 2 {
		t.Errorf("created never rose (%v): the test proves nothing", created)
	}

	cfg := openai.DefaultConfig("sk-beta")
	cfg.BaseURL = s.URL + "/v1"
	st, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "m-slow", MaxTokens: 6, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "count the boats"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chunks := 0
	for {
		_, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SDK stream: %v", err)
		}
		chunks++
	}
	if chunks < 3 {
		t.Errorf("SDK read %d chunks", chunks)
	}
}

// TestWireStreamCut: a stream the upstream ends after its usage chunk,
// without [DONE], is never completed: the client sees one
// stream_truncated error event and no [DONE]; the SDK raises.
func TestWireStreamCut(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, wireConfig(`cut=faults: ["stream-cut"]`)))
	body := `{"model":"m-cut","stream":true,"messages":[{"role":"user","content":"hello"}]}`
	resp, lines := rawStream(t, s.URL, "sk-acme", body)
	all := strings.Join(lines, "\n")
	if n := len(lines); resp.StatusCode != 200 || strings.Contains(all, "[DONE]") || n < 3 || !strings.HasPrefix(lines[n-3], `data: {"error":`) ||
		!strings.Contains(lines[n-3], `"code":"stream_truncated"`) || !strings.HasPrefix(lines[n-2], ": custody-receipt ") {
		t.Fatalf("%d %q", resp.StatusCode, lines)
	}
	if !strings.Contains(all, ": custody-verdict rejected checks=") || resp.Trailer.Get("Custody-Verdict") != "rejected" {
		t.Errorf("verdict comment or trailer missing: %q %v", lines, resp.Trailer)
	}
	// The receipt of the rejected stream opens with what was delivered,
	// error event included.
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	rcpt := write("r.json", fetchReceipt(t, s, "sk-acme", resp.Header.Get("Custody-Request-Id")))
	if code, out, errOut := runCmd(t, dir, "verify", "--log", s.URL+"/log", "--request", write("req.json", body),
		"--response", write("resp.sse", strings.Join(lines, "\n\n")+"\n\n"), rcpt); code != 0 {
		t.Errorf("receipt of the truncated stream refused: %d %s %s", code, out, errOut)
	}

	cfg := openai.DefaultConfig("sk-acme")
	cfg.BaseURL = s.URL + "/v1"
	st, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "m-cut", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello again"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		_, err := st.Recv()
		if errors.Is(err, io.EOF) {
			t.Fatal("the SDK saw a complete stream")
		}
		if err != nil {
			if !strings.Contains(err.Error(), "terminal event") {
				t.Errorf("SDK error %v", err)
			}
			break
		}
	}
}

// TestWireStrictMembers: a request with a case-variant copy of a checked
// member is refused 400 naming it; an upstream answer with an ambiguous
// model is refused 502 response_ambiguous, plain and streamed.
func TestWireStrictMembers(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, wireConfig("clean=", `amb=faults: ["ambiguous-model"]`)))
	resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"m-clean","messages":[{"role":"user","content":"a"}],"Messages":[{"role":"user","content":"b"}]}`)
	if resp.StatusCode != 400 || !strings.Contains(body, `"code":"invalid_request"`) || !strings.Contains(body, `member \"Messages\" differs from \"messages\" only in case`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	resp, body = post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"m-clean","mod\u0065l":"m-amb","messages":[{"role":"user","content":"a"}]}`)
	if resp.StatusCode != 400 || !strings.Contains(body, `member \"model\" is written with escapes`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	resp, body = post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("m-amb", "hello", false))
	if resp.StatusCode != 502 || !strings.Contains(body, `"code":"response_ambiguous"`) || strings.Contains(body, "sim-shadow-1") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	_, lines := rawStream(t, s.URL, "sk-acme", chatBody("m-amb", "hello", true))
	if all := strings.Join(lines, "\n"); strings.Contains(all, "[DONE]") || !strings.Contains(all, `"code":"response_ambiguous"`) || strings.Contains(all, "sim-shadow-1") {
		t.Fatalf("stream %q", lines)
	}
}

// TestWireEmbeddingsTwoTenantsAcrossReplicas: the same embeddings input
// from two tenants, through two replicas sharing one PostgreSQL index,
// gets the same bytes and both pass; the same bytes as the answer to
// another input are a replay. The response-swap simulator serves each
// request the previous response of its kind.
func TestWireEmbeddingsTwoTenantsAcrossReplicas(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dsn := postgresDSN(t)
	simURL := startSim(t, "--fault", "response-swap", "--model", "sim-1")
	dir := t.TempDir()
	cfgA, cfgB := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	os.WriteFile(cfgA, []byte(replicaConfig("a", dsn, simURL)), 0o600)
	os.WriteFile(cfgB, []byte(replicaConfig("b", dsn, simURL)), 0o600)
	a := startServe(t, dir, "--config", cfgA)
	b := startServe(t, dir, "--config", cfgB)
	same := `{"model":"sim-1","input":"the tide tables for Tuesday"}`
	// acme's answer is fresh; beta's is acme's bytes (the swap), which are
	// the right answer to the same input.
	var first string
	for _, step := range []struct {
		s   *server
		key string
	}{{a, "sk-acme"}, {b, "sk-beta"}} {
		resp, body := post(t, step.s.URL+"/v1/embeddings", step.key, same)
		if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "verified" {
			t.Fatalf("%s: %d %s %s", step.key, resp.StatusCode, resp.Header.Get("Custody-Checks"), body)
		}
		if first == "" {
			first = resp.Header.Get("Custody-Request-Id")
		}
	}
	// Another input gets those bytes again: a replay, which names no
	// other request.
	resp, body := post(t, a.URL+"/v1/embeddings", "sk-beta", `{"model":"sim-1","input":"a different question"}`)
	if outcome(resp.StatusCode, body) != "response_replayed" || strings.Contains(body, first) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
