package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// TestServeWithNoConfig is the quick start: `custody serve` in an empty
// folder serves a chat completion and a stream at once.
func TestServeWithNoConfig(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir)
	if !strings.Contains(s.stdout.String(), "curl") || !strings.Contains(s.stdout.String(), "custody-data") {
		t.Errorf("banner lacks the curl example or the data dir:\n%s", s.stdout)
	}
	resp, body := post(t, s.URL+"/v1/chat/completions", "", `{"model":"sim-1","messages":[{"role":"user","content":"Hello, custody"}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "verified" {
		t.Fatalf("%d %v\n%s\nstderr: %s", resp.StatusCode, resp.Header, body, s.stderr)
	}
	resp, body = post(t, s.URL+"/v1/chat/completions", "", `{"model":"sim-1","stream":true,"messages":[{"role":"user","content":"Hello, stream"}]}`)
	lines := sseLines(body)
	if resp.StatusCode != 200 || len(lines) < 4 || lines[len(lines)-1] != "data: [DONE]" ||
		!strings.HasPrefix(lines[len(lines)-2], ": custody-verdict verified checks=") ||
		!strings.HasPrefix(lines[len(lines)-3], ": custody-receipt ") {
		t.Fatalf("stream: %d %q", resp.StatusCode, lines)
	}
	if resp.Trailer.Get("Custody-Verdict") != "verified" {
		t.Errorf("stream trailer verdict %q", resp.Trailer.Get("Custody-Verdict"))
	}
}

// TestOpenAIClient drives the gateway with a real client library.
func TestOpenAIClient(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir)
	cfg := openai.DefaultConfig("unused-on-loopback")
	cfg.BaseURL = s.URL + "/v1"
	c := openai.NewClientWithConfig(cfg)
	ctx := context.Background()
	nonce := "k9XbQ2mZ7w"
	r, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "sim-1",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Repeat " + nonce + " please"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Choices[0].Message.Content, nonce) || r.Usage.PromptTokens == 0 {
		t.Errorf("answer %+v", r)
	}
	if r.Header().Get("Custody-Verdict") != "verified" {
		t.Errorf("headers %v", r.Header())
	}

	st, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "sim-1", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Stream " + nonce}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if chunk.Usage != nil {
			t.Errorf("usage chunk delivered to a client that did not ask for it")
		}
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
		}
	}
	if !strings.Contains(text.String(), nonce) {
		t.Errorf("streamed %q", text.String())
	}

	models, err := c.ListModels(ctx)
	if err != nil || len(models.Models) != 1 || models.Models[0].ID != "sim-1" {
		t.Errorf("models %+v %v", models, err)
	}
	_, err = c.CreateEmbeddings(ctx, openai.EmbeddingRequest{Model: "sim-1", Input: []string{"embed me"}})
	if err != nil {
		t.Errorf("embeddings: %v", err)
	}
	_, err = c.CreateCompletion(ctx, openai.CompletionRequest{Model: "sim-1", Prompt: "Complete " + nonce, MaxTokens: 8})
	if err != nil {
		t.Errorf("completions: %v", err)
	}
}

func TestUsageAndVersion(t *testing.T) {
	t.Parallel() // runs the binary in a dir of its own
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Usage:"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"version"}, 0, "custody "},
		{[]string{"help"}, 0, "custody serve"},
		{[]string{"serve", "--config", "/nonexistent.yaml"}, 1, "bad configuration"},
		{[]string{"sim", "--fault", "gremlins"}, 2, `unknown fault "gremlins"`},
	} {
		code, out, errOut := runCmd(t, dir, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("custody %q: exit %d, want %d with %q\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}
