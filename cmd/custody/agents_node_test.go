package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The agents and SDKs the README says work through custody unchanged,
// from npm, at these versions (the current releases when pinned; bump
// them together and re-run TestAgents*). openai 6 is installed under the
// alias openai6 beside openai 7.
var agentPackages = []string{
	"@anthropic-ai/claude-code@2.1.332",
	"@openai/agents@0.20.0",
	"openai@7.60.0",
	"openai6@npm:openai@6.49.0",
	"@anthropic-ai/sdk@1.17.0",
	"ai@7.0.185",
	"@ai-sdk/openai@4.0.126",
	"@ai-sdk/anthropic@4.0.112",
	"@langchain/openai@1.6.0",
	"@langchain/core@1.4.0",
	"zod@4.6.7",
}

// agentSDKs returns a node_modules holding agentPackages, installed once
// with npm into the user cache (custody-npm/agents-...), as nodeSDKs
// does for the two SDKs; without node and npm the test is skipped.
func agentSDKs(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("installs and runs the agents from npm")
	}
	nodeSDKs(t) // skips without node and npm, like every SDK test
	// The agent tests run in parallel: one installs the packages.
	agentSDKsMu.Lock()
	defer agentSDKsMu.Unlock()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer("@", "", "/", "-", ":", "-").Replace("agents-" + strings.Join(agentPackages, "+"))
	if len(name) > 200 {
		name = name[:200]
	}
	dir := filepath.Join(cache, "custody-npm", name)
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".custody-complete")); err == nil {
		return modules
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"install", "--silent", "--no-audit", "--no-fund", "--no-save", "--prefix", dir}, agentPackages...)
	if out, err := exec.Command("npm", args...).CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	// Claude Code's npm package fetches its native binary in a
	// postinstall script, which npm may leave unrun: run it if so.
	claude := filepath.Join(modules, ".bin", "claude")
	if exec.Command(claude, "--version").Run() != nil {
		cmd := exec.Command("node", "install.cjs")
		cmd.Dir = filepath.Join(modules, "@anthropic-ai", "claude-code")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("claude-code install: %v\n%s", err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(modules, ".custody-complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return modules
}

var agentSDKsMu sync.Mutex

// agentServe runs `custody serve` on its defaults (the simulator sim-1,
// tenant local without a key on loopback), as a newcomer runs it.
func agentServe(t *testing.T) *server {
	t.Helper()
	return startServe(t, t.TempDir())
}

// runAgentScript runs testdata/agents/script with the agent packages
// against s; env adds variables. The script prints "ok" when its own
// assertions hold.
func runAgentScript(t *testing.T, s *server, script string, env ...string) {
	t.Helper()
	modules := agentSDKs(t)
	path, _ := filepath.Abs(filepath.Join("testdata", "agents", script))
	cmd := exec.Command("node", path)
	cmd.Env = append(os.Environ(), append([]string{"NODE_PATH=" + modules, "BASE_URL=" + s.URL,
		"OPENAI_BASE_URL=" + s.URL + "/v1", "OPENAI_API_KEY=anything", "AI_SDK_LOG_WARNINGS=false"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("node %s %v: %v\n%s", script, env, err, out)
	}
}

// transaction is one line of custody's transaction log.
type transaction struct {
	ID       string `json:"id"`
	Endpoint string `json:"endpoint"`
	Verdict  string `json:"verdict"`
	Status   int    `json:"status"`
	Code     string `json:"code"`
}

// allVerified asserts that every transaction s logged is verified, both
// in the log and in its receipt's leaf, but for refusals with a code in
// refused (counted as "refused:<code>"), and that each endpoint (or
// "refused:<code>") of want counted at least that many; it returns the counts.
func allVerified(t *testing.T, s *server, want map[string]int, refused ...string) map[string]int {
	t.Helper()
	// A stream's line is logged once its trailers are out, which may be
	// after the client has read its last event: wait for the counts.
	var got map[string]int
	var txs []transaction
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, txs = map[string]int{}, nil
		sc := bufio.NewScanner(strings.NewReader(s.stdout.String() + s.stderr.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, `"msg":"transaction"`) {
				continue
			}
			var tx transaction
			if err := json.Unmarshal([]byte(line), &tx); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			if tx.Verdict == "rejected" && slices.Contains(refused, tx.Code) {
				got["refused:"+tx.Code]++
				continue
			}
			got[tx.Endpoint]++
			txs = append(txs, tx)
		}
		done := true
		for ep, n := range want {
			done = done && got[ep] >= n
		}
		if done || time.Now().After(deadline) {
			break
		}
	}
	for _, tx := range txs {
		if tx.Verdict != "verified" {
			t.Errorf("transaction %s (%s): %s %d %s", tx.ID, tx.Endpoint, tx.Verdict, tx.Status, tx.Code)
			continue
		}
		resp, body := get(t, s.URL+"/v1/custody/receipts/"+tx.ID, "")
		if resp.StatusCode != 200 {
			t.Errorf("receipt %s: %d %s", tx.ID, resp.StatusCode, body)
			continue
		}
		var r struct {
			Leaf []byte `json:"leaf"`
		}
		var leaf struct {
			Verdict string `json:"verdict"`
		}
		if json.Unmarshal([]byte(body), &r) != nil || json.Unmarshal(r.Leaf, &leaf) != nil || leaf.Verdict != "verified" {
			t.Errorf("receipt %s: leaf verdict %q", tx.ID, leaf.Verdict)
		}
	}
	for ep, n := range want {
		if got[ep] < n {
			t.Errorf("%d %s transactions, want at least %d (all: %v)", got[ep], ep, n, got)
		}
	}
	return got
}

// TestAgentsClaudeCode: Claude Code, unchanged (`claude -p`, its
// ANTHROPIC_BASE_URL pointed at custody, any key), asked to use its Read
// tool: it sends what it sends (a mid-conversation system message,
// thinking, output_config, context_management, 20-odd tools, a failed
// tool's is_error...), the simulator calls Read, Claude Code runs it and
// sends the result back, and the run completes. Every transaction is
// verified, in the log and in its receipt.
//
// Its thinking: adaptive makes the engine (the simulator) reason; the
// reasoning comes back to Claude Code as thinking blocks with an empty
// signature, and Claude Code sends them back in its next turn, which
// custody accepts (as the assistant message's reasoning_content): a
// proxy between Claude Code and custody records the requests.
func TestAgentsClaudeCode(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := agentServe(t)
	modules := agentSDKs(t)
	proxy := newRecordingProxy(t, s.URL)
	work := notesDir(t)
	cmd := exec.Command(filepath.Join(modules, ".bin", "claude"), "-p", "--model", "sim-1",
		"--output-format", "stream-json", "--verbose", "--max-turns", "4",
		"Use the Read tool to read notes.txt and tell me the secret word.")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+proxy.URL, "ANTHROPIC_API_KEY=anything",
		"ANTHROPIC_SMALL_FAST_MODEL=sim-1", "ANTHROPIC_DEFAULT_HAIKU_MODEL=sim-1",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s\ncustody:\n%s", err, out, s.stdout)
	}
	var used, result, thought bool
	for _, line := range strings.Split(string(out), "\n") {
		var ev struct {
			Type    string `json:"type"`
			IsError bool   `json:"is_error"`
			Message struct {
				Content []struct {
					Type string `json:"type"`
					Name string `json:"name"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		for _, c := range ev.Message.Content {
			used = used || ev.Type == "assistant" && c.Type == "tool_use" && c.Name == "Read"
			thought = thought || ev.Type == "assistant" && c.Type == "thinking"
		}
		if ev.Type == "result" {
			result = !ev.IsError
		}
	}
	if !used || !result || !thought {
		t.Fatalf("claude -p: Read used %v, successful result %v, thinking received %v\n%s", used, result, thought, out)
	}
	allVerified(t, s, map[string]int{"messages": 2})
	// A later turn sent a thinking block back, and custody served it.
	sent := proxy.requests()
	back := 0
	for _, r := range sent {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if r.path != "/v1/messages" || json.Unmarshal(r.body, &req) != nil {
			continue
		}
		for _, m := range req.Messages {
			var blocks []struct {
				Type      string  `json:"type"`
				Thinking  string  `json:"thinking"`
				Signature *string `json:"signature"`
			}
			_ = json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if m.Role == "assistant" && b.Type == "thinking" && strings.Contains(b.Thinking, "answering") {
					if r.status != http.StatusOK {
						t.Errorf("a turn with a thinking block sent back: status %d", r.status)
					}
					back++
				}
			}
		}
	}
	if back == 0 {
		t.Errorf("no turn sent a thinking block back (%d requests)", len(sent))
	}
}

// recordingProxy is a reverse proxy in front of custody that records
// each request an agent sends through it, with custody's status.
type recordingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	sent []recorded
}

// newRecordingProxy starts one in front of target, closed with the test.
func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rw := &statusWriter{ResponseWriter: w}
		(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, FlushInterval: -1}).ServeHTTP(rw, r)
		p.mu.Lock()
		p.sent = append(p.sent, recorded{path: r.URL.Path, body: body, status: rw.status})
		p.mu.Unlock()
	}))
	t.Cleanup(p.Close)
	return p
}

// requests are the requests recorded so far.
func (p *recordingProxy) requests() []recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sent)
}

// notesDir is a working directory for Claude Code holding notes.txt,
// the file its prompts have it read.
func notesDir(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("the secret word is plum\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return work
}

// recorded is a request an agent sent, and custody's status.
type recorded struct {
	path   string
	body   []byte
	status int
}

// statusWriter records the status a handler writes.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestAgentsOpenAIAgents: @openai/agents, unchanged, in its default
// Responses mode and in chat-completions mode: an agent with a function
// tool runs to its final output, plainly and streamed, and with
// reasoning asked for, its reasoning items sent back in the tool loop
// (carried as reasoning_content: the translation outcome says
// input.reasoning); every transaction verified.
func TestAgentsOpenAIAgents(t *testing.T) {
	t.Parallel() // its own data dir and ports
	for _, tc := range []struct{ api, endpoint string }{{"", "responses"}, {"chat_completions", "chat.completions"}} {
		t.Run("api="+tc.api, func(t *testing.T) {
			t.Parallel() // its own data dir and ports
			s := agentServe(t)
			runAgentScript(t, s, "agents.cjs", "API="+tc.api)
			allVerified(t, s, map[string]int{tc.endpoint: 6})
			if tc.endpoint == "responses" && !slices.ContainsFunc(translations(t, s), func(d string) bool {
				return strings.Contains(d, "input.reasoning")
			}) {
				t.Errorf("no turn sent a reasoning item back: %q", translations(t, s))
			}
		})
	}
}

// translations are the details of the translation outcomes of the
// transactions s logged, read from their receipts' leaves.
func translations(t *testing.T, s *server) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s.stdout.String() + s.stderr.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var tx transaction
		if !strings.Contains(sc.Text(), `"msg":"transaction"`) || json.Unmarshal(sc.Bytes(), &tx) != nil {
			continue
		}
		_, body := get(t, s.URL+"/v1/custody/receipts/"+tx.ID, "")
		var r struct {
			Leaf []byte `json:"leaf"`
		}
		var leaf struct {
			Checks []struct{ Check, Detail string } `json:"checks"`
		}
		if json.Unmarshal([]byte(body), &r) != nil || json.Unmarshal(r.Leaf, &leaf) != nil {
			continue
		}
		for _, c := range leaf.Checks {
			if c.Check == "translation" {
				out = append(out, c.Detail)
			}
		}
	}
	return out
}

// TestAgentsOpenAINode: openai 6 and 7, unchanged: chat with a tool
// call and its result (the call's arguments sent back as given), the
// Responses API with what agents send (include: [], service_tier,
// prompt_cache_key, safety_identifier, truncation, max_tool_calls,
// text.verbosity) and through the stream helpers
// (responses.stream().finalResponse()), and a stream's verdict read as
// docs/guide.md tells (withResponse() headers, then the receipt).
func TestAgentsOpenAINode(t *testing.T) {
	t.Parallel() // its own data dir and ports
	for _, pkg := range []string{"openai6", "openai"} {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel() // its own data dir and ports
			s := agentServe(t)
			runAgentScript(t, s, "openai.cjs", "PKG="+pkg)
			allVerified(t, s, map[string]int{"chat.completions": 2, "responses": 3})
		})
	}
}

// TestAgentsAnthropicNode: @anthropic-ai/sdk, unchanged: a stream read
// to finalMessage(), a Claude Code-like agent turn and the turn after a
// failed tool, and beta.messages.toolRunner (which asks for a server
// thread custody does not keep) running a tool to the end.
func TestAgentsAnthropicNode(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := agentServe(t)
	runAgentScript(t, s, "anthropic.cjs")
	// The runner's second turn continues its thread, which custody does
	// not keep: answered thread_not_found (not_found), on which the SDK
	// sends the whole conversation again. That refusal is recorded too,
	// its log line not necessarily before the resent turn's: waited for.
	got := allVerified(t, s, map[string]int{"messages": 5, "refused:not_found": 1}, "not_found")
	if got["refused:not_found"] != 1 {
		t.Errorf("%d thread continues refused, want 1 (%v)", got["refused:not_found"], got)
	}
}

// TestAgentsVercelAI: ai with @ai-sdk/openai (Responses and chat) and
// @ai-sdk/anthropic, unchanged: a tool loop on each, generated and
// streamed.
func TestAgentsVercelAI(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := agentServe(t)
	runAgentScript(t, s, "vercel.cjs")
	allVerified(t, s, map[string]int{"responses": 4, "chat.completions": 4, "messages": 4})
}

// TestAgentsLangChain: @langchain/openai, unchanged: invoke, stream and a
// bound tool, on chat and with useResponsesApi.
func TestAgentsLangChain(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := agentServe(t)
	runAgentScript(t, s, "langchain.cjs")
	allVerified(t, s, map[string]int{"chat.completions": 3, "responses": 3})
}

// TestTranslationEvidence: where custody carries a member of a
// translated request as something else, or proves it a no-op, the
// transaction says so by name (never a value): translation= in
// Custody-Checks, the same outcome in the ledger leaf.
func TestTranslationEvidence(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := agentServe(t)
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/responses", `{"model":"sim-1","input":"hi","include":[],"truncation":"auto","max_output_tokens":8,
		  "text":{"verbosity":"low"},"metadata":{"k":"secret-value"}}`,
			"translation=no-op:include,truncation,metadata carried:text.verbosity"},
		{"/v1/messages", `{"model":"sim-1","max_tokens":8,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"},
		  "thread":{"type":"create"},"metadata":{"user_id":"secret-user"},"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`,
			"translation=no-op:thread,cache_control carried:thinking,output_config.effort,metadata.user_id"},
	} {
		resp, out := post(t, s.URL+tc.path, "", tc.body)
		checks := resp.Header.Get("Custody-Checks")
		if resp.StatusCode != 200 || !strings.Contains(checks, tc.want) {
			t.Fatalf("%s: %d, Custody-Checks %q, want %q\n%s", tc.path, resp.StatusCode, checks, tc.want, out)
		}
		if strings.Contains(checks, "secret") {
			t.Errorf("a value in Custody-Checks: %q", checks)
		}
		receipt := resp.Header.Get("Custody-Receipt")
		r, body := get(t, s.URL+receipt, "")
		var rc struct {
			Leaf []byte `json:"leaf"`
		}
		var leaf struct {
			Checks []struct {
				Check, Status, Detail string
			} `json:"checks"`
		}
		if r.StatusCode != 200 || json.Unmarshal([]byte(body), &rc) != nil || json.Unmarshal(rc.Leaf, &leaf) != nil {
			t.Fatalf("receipt %s: %d %s", receipt, r.StatusCode, body)
		}
		found := false
		for _, c := range leaf.Checks {
			found = found || c.Check == "translation" && c.Status == "ok" && "translation="+c.Detail == tc.want
		}
		if !found {
			t.Errorf("%s: the leaf's checks %+v hold no %q", tc.path, leaf.Checks, tc.want)
		}
	}
}
