package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
)

// memRecorder keeps transactions in memory; fail makes Record fail.
type memRecorder struct {
	mu      sync.Mutex
	txs     []custody.Transaction
	fail    atomic.Bool
	discard bool // benchmarks: keep nothing
}

func (m *memRecorder) Salts(id string) (a, b [32]byte) { a[0], b[0] = 1, 2; return }
func (m *memRecorder) Record(_ context.Context, tx *custody.Transaction) error {
	if m.fail.Load() {
		return fmt.Errorf("disk full")
	}
	if m.discard {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.txs = append(m.txs, *tx)
	return nil
}
func (m *memRecorder) last(t *testing.T) custody.Transaction {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.txs) == 0 {
		t.Fatal("nothing recorded")
	}
	return m.txs[len(m.txs)-1]
}

// fakeUpstream answers like an honest OpenAI-compatible server unless
// the test overrides a piece of it.
type fakeUpstream struct {
	t       *testing.T
	calls   atomic.Int32
	status  int
	mutate  func(resp map[string]any, r *http.Request) // edit the plain response
	echo    func(id string) string                     // X-Request-Id echo
	stream  func(w io.Writer, id string, usage int)    // custom stream body
	last    atomic.Pointer[http.Request]
	body    atomic.Pointer[[]byte]
	delay   time.Duration
	errBody string // the body of a non-200 status; default: an OpenAI error naming the key
}

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	b, _ := io.ReadAll(r.Body)
	f.body.Store(&b)
	f.last.Store(r)
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	echo := r.Header.Get("X-Request-Id")
	if f.echo != nil {
		echo = f.echo(echo)
	}
	w.Header().Set("X-Request-Id", echo)
	if f.status != 0 && f.status != 200 {
		w.WriteHeader(f.status)
		if f.errBody != "" {
			io.WriteString(w, f.errBody)
			return
		}
		fmt.Fprintf(w, `{"error":{"message":"upstream says no, key sk-upstream-secret","code":"x"}}`)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct{ Role, Content string }
	}
	json.Unmarshal(b, &req)
	enc := o200k(f.t)
	var msgs []tokenize.Message
	for _, m := range req.Messages {
		msgs = append(msgs, tokenize.Message{Role: m.Role, Content: m.Content})
	}
	usage := tokenize.Chat(enc, msgs)
	id := fmt.Sprintf("chatcmpl-%d-%d", time.Now().UnixNano(), f.calls.Load())
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		if f.stream != nil {
			f.stream(w, id, usage)
			return
		}
		for _, word := range []string{"Hello", " there"} {
			fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", id, req.Model, word)
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", id, req.Model)
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":2,\"total_tokens\":%d}}\n\n", id, req.Model, usage, usage+2)
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	resp := map[string]any{
		"id": id, "object": "chat.completion", "created": 1, "model": req.Model, "system_fingerprint": "fp_1",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "Hello there. " + lastContent(req.Messages)}}},
		"usage":   map[string]any{"prompt_tokens": usage, "completion_tokens": 2, "total_tokens": usage + 2},
	}
	if f.mutate != nil {
		f.mutate(resp, r)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

var (
	o200kOnce sync.Once
	o200kEnc  tokenize.Counter
)

func o200k(t *testing.T) tokenize.Counter {
	o200kOnce.Do(func() {
		var err error
		if o200kEnc, err = tokenize.Lookup("o200k_base"); err != nil {
			t.Error(err)
		}
	})
	return o200kEnc
}

// lastContent is what the fake model "answers": it repeats the prompt.
func lastContent(msgs []struct{ Role, Content string }) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].Content
}

type harness struct {
	t       *testing.T
	gw      *Gateway
	srv     *httptest.Server
	rec     *memRecorder
	primary *fakeUpstream
	backup  *fakeUpstream
}

const testConfig = `
admin_keys: [adm-1]
tenants:
  - id: acme
    api_keys: [sk-acme]
    use_cases: {code: strict}
  - id: beta
    api_keys: [sk-beta]
    models: [small]
providers:
  - {name: primary, kind: openai, base_url: "PRIMARY", request_id_echo: x-request-id, region: us-east-1, timeout: 2s, api_key: sk-upstream-secret}
  - {name: backup, kind: openai, base_url: "BACKUP", region: eu-west-1, timeout: 2s}
models:
  - name: big
    context_window: 50
    routes:
      - {provider: primary, model: big-0827}
      - {provider: backup, model: big-0827}
  - name: small
    context_window: 1000
    routes: [{provider: primary}]
policies:
  - name: strict
    fallback: deny
    require_pinned: true
limits: {max_body_bytes: 4096}
`

func newHarness(t *testing.T, yaml string) *harness {
	t.Helper()
	return newHarnessWith(t, yaml, nil)
}

// newHarnessWith is newHarness with the gateway's options edited by opt.
func newHarnessWith(t *testing.T, yaml string, opt func(*Options)) *harness {
	t.Helper()
	o200k(t) // loaded once, before any upstream deadline runs
	h := &harness{t: t, rec: &memRecorder{}, primary: &fakeUpstream{t: t}, backup: &fakeUpstream{t: t}}
	ps := httptest.NewServer(h.primary)
	bs := httptest.NewServer(h.backup)
	t.Cleanup(ps.Close)
	t.Cleanup(bs.Close)
	yaml = strings.ReplaceAll(yaml, "PRIMARY", ps.URL+"/v1")
	yaml = strings.ReplaceAll(yaml, "BACKUP", bs.URL+"/v1")
	cfg, err := config.Parse("test.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*upstream.Client{}
	for _, p := range cfg.Providers {
		clients[p.Name] = upstream.New(upstream.Config{Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Timeout: p.Timeout,
			BreakerThreshold: p.BreakerThreshold, BreakerCooldown: p.BreakerCooldown})
	}
	o := Options{Config: cfg, Clients: clients, Recorder: h.rec, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if opt != nil {
		opt(&o)
	}
	gw, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h.gw = gw
	h.srv = httptest.NewServer(gw)
	t.Cleanup(h.srv.Close)
	return h
}

func (h *harness) do(method, path, key, body string, hdr ...string) (*http.Response, string) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func chat(model, content string, stream bool) string {
	b, _ := json.Marshal(map[string]any{"model": model, "stream": stream, "messages": []any{map[string]any{"role": "user", "content": content}}})
	return string(b)
}

// errCode extracts the OpenAI error code, failing on a non-error shape.
func errCode(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct {
			Message, Type, Code string
			Param               *string
		}
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" || e.Error.Type == "" || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error body: %s", body)
	}
	return e.Error.Code
}

func TestPlainChatVerified(t *testing.T) {
	h := newHarness(t, testConfig)
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false), "Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("Custody-Request-Id")
	for k, want := range map[string]string{
		"Custody-Verdict": "verified", "Custody-Model": "small", "Custody-Provider": "primary",
		"Custody-Fallback": "none", "Custody-Receipt": "/v1/custody/receipts/" + id,
		"Custody-Checks": "capacity=ok;request_id=ok;shape=ok;model=ok;replay=ok;prompt_tokens=ok;contract=ok",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	up := h.primary.last.Load()
	if up.Header.Get("X-Request-Id") != id {
		t.Errorf("upstream X-Request-Id %q, want %q", up.Header.Get("X-Request-Id"), id)
	}
	if tp := up.Header.Get("Traceparent"); !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || strings.Contains(tp, "b7ad6b7169203331") {
		t.Errorf("traceparent not continued with a new span: %q", tp)
	}
	if up.Header.Get("Authorization") != "Bearer sk-upstream-secret" {
		t.Errorf("upstream key not sent")
	}
	tx := h.rec.last(t)
	if tx.ID != id || tx.Verdict != custody.Verified || tx.Tenant != "acme" || tx.PromptTokensLocal != tx.PromptTokensReported || len(tx.RequestCommitment) != 32 || len(tx.ResponseCommitment) != 32 {
		t.Errorf("recorded %+v", tx)
	}
	if !json.Valid([]byte(body)) {
		t.Errorf("body not relayed: %s", body)
	}
}

func TestRouteModelRewrittenUpstream(t *testing.T) {
	h := newHarness(t, testConfig)
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got := string(*h.primary.body.Load()); !strings.Contains(got, `"model":"big-0827"`) {
		t.Errorf("upstream got %s", got)
	}
	if resp.Header.Get("Custody-Model") != "big-0827" {
		t.Errorf("Custody-Model = %q", resp.Header.Get("Custody-Model"))
	}
}

func TestStreamRelay(t *testing.T) {
	for _, tc := range []struct {
		name         string
		includeUsage bool
	}{{"client did not ask usage", false}, {"client asked usage", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig)
			body := chat("small", "hi", true)
			if tc.includeUsage {
				body = strings.Replace(body, `"stream":true`, `"stream":true,"stream_options":{"include_usage":true}`, 1)
			}
			req, _ := http.NewRequest("POST", h.srv.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer sk-acme")
			resp, err := h.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if !strings.Contains(string(*h.primary.body.Load()), `"include_usage":true`) {
				t.Errorf("custody did not ask the upstream for usage")
			}
			var lines []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if sc.Text() != "" {
					lines = append(lines, sc.Text())
				}
			}
			id := resp.Header.Get("Custody-Request-Id")
			n := len(lines)
			if n < 4 || lines[n-1] != "data: [DONE]" || lines[n-2] != ": custody-verdict verified checks="+resp.Trailer.Get("Custody-Checks") || lines[n-3] != ": custody-receipt "+id {
				t.Fatalf("stream ends %q", lines)
			}
			if v := resp.Header.Get("Custody-Verdict"); v != "pending" {
				t.Errorf("header verdict %q, want pending", v)
			}
			hasUsage := strings.Contains(strings.Join(lines, "\n"), `"usage"`)
			if hasUsage != tc.includeUsage {
				t.Errorf("usage chunk relayed = %v, want %v", hasUsage, tc.includeUsage)
			}
			if v := resp.Trailer.Get("Custody-Verdict"); v != "verified" {
				t.Errorf("trailer verdict %q", v)
			}
			if tx := h.rec.last(t); tx.Verdict != custody.Verified || tx.PromptTokensReported != tx.PromptTokensLocal || !tx.Stream {
				t.Errorf("recorded %+v", tx)
			}
		})
	}
}

func TestRejections(t *testing.T) {
	type tcase struct {
		name      string
		key, body string
		hdr       []string
		setup     func(h *harness)
		status    int
		code      custody.Code
		forwarded bool // the upstream was called
		recorded  bool
		notInBody string
	}
	big := chat("big", strings.Repeat("word ", 80), false)
	cases := []tcase{
		{name: "no key", body: chat("small", "hi", false), status: 401, code: custody.CodeUnauthorized},
		{name: "unknown key", key: "sk-nope", body: chat("small", "hi", false), status: 401, code: custody.CodeUnauthorized},
		{name: "admin key is not a tenant", key: "adm-1", body: chat("small", "hi", false), status: 401, code: custody.CodeUnauthorized},
		{name: "malformed json", key: "sk-acme", body: `{"model":`, status: 400, code: custody.CodeInvalidRequest, recorded: true},
		{name: "bad utf8", key: "sk-acme", body: "{\"model\":\"small\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", status: 400, code: custody.CodeInvalidRequest, recorded: true},
		{name: "wrong type", key: "sk-acme", body: `{"model":"small","messages":"hi"}`, status: 400, code: custody.CodeInvalidRequest, recorded: true},
		{name: "unknown model", key: "sk-acme", body: chat("nope", "hi", false), status: 400, code: custody.CodeInvalidRequest, recorded: true},
		{name: "model not allowed for tenant", key: "sk-beta", body: chat("big", "hi", false), status: 400, code: custody.CodeInvalidRequest, recorded: true},
		{name: "unknown use case", key: "sk-acme", body: chat("small", "hi", false), hdr: []string{"Custody-Use-Case", "poetry"}, status: 400, code: custody.CodeInvalidRequest, recorded: true},
		{name: "too large", key: "sk-acme", body: chat("small", strings.Repeat("x", 5000), false), status: 413, code: custody.CodeRequestTooLarge, recorded: true},
		{name: "over capacity never forwarded", key: "sk-acme", body: big, status: 400, code: custody.CodeContextLengthExceeded, recorded: true},
		{name: "wrong model", key: "sk-acme", body: chat("small", "hi", false), setup: func(h *harness) {
			h.primary.mutate = func(m map[string]any, _ *http.Request) { m["model"] = "cheaper-model" }
		}, status: 502, code: custody.CodeModelMismatch, forwarded: true, recorded: true},
		{name: "placeholder usage", key: "sk-acme", body: chat("small", strings.Repeat("word ", 100), false), setup: func(h *harness) {
			h.primary.mutate = func(m map[string]any, _ *http.Request) {
				m["usage"] = map[string]any{"prompt_tokens": 1, "completion_tokens": 2}
			}
		}, status: 502, code: custody.CodePromptTokenMismatch, forwarded: true, recorded: true},
		{name: "echo of another request", key: "sk-acme", body: chat("small", "hi", false), setup: func(h *harness) {
			h.primary.echo = func(string) string { return "someone-else" }
		}, status: 502, code: custody.CodeRequestIDMismatch, forwarded: true, recorded: true},
		{name: "error as 200", key: "sk-acme", body: chat("small", "hi", false), setup: func(h *harness) {
			h.primary.mutate = func(m map[string]any, _ *http.Request) { m["choices"] = []any{} }
		}, status: 502, code: custody.CodeUpstreamErrorAsSuccess, forwarded: true, recorded: true},
		{name: "upstream 400 passed through without its secret", key: "sk-acme", body: chat("small", "hi", false), setup: func(h *harness) {
			h.primary.status = 422
		}, status: 422, code: custody.CodeUpstreamRejected, forwarded: true, recorded: true, notInBody: "sk-upstream-secret"},
		{name: "upstream down, strict forbids fallback", key: "sk-acme", body: chat("big", "hi", false), hdr: []string{"Custody-Use-Case", "code"}, setup: func(h *harness) {
			h.primary.status = 503
		}, status: 503, code: custody.CodeFallbackNotPermitted, forwarded: true, recorded: true},
		{name: "upstream timeout", key: "sk-acme", body: chat("small", "hi", false), setup: func(h *harness) {
			h.primary.delay = 2500 * time.Millisecond
		}, status: 504, code: custody.CodeUpstreamTimeout, forwarded: true, recorded: true},
		{name: "ledger down fails closed", key: "sk-acme", body: chat("small", "hi", false), setup: func(h *harness) {
			h.rec.fail.Store(true)
		}, status: 503, code: custody.CodeLedgerUnavailable, forwarded: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "upstream timeout" && testing.Short() {
				t.Skip("slow")
			}
			h := newHarness(t, testConfig)
			if tc.setup != nil {
				tc.setup(h)
			}
			resp, body := h.do("POST", "/v1/chat/completions", tc.key, tc.body, tc.hdr...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if got := errCode(t, body); got != string(tc.code) {
				t.Fatalf("code %s, want %s: %s", got, tc.code, body)
			}
			if resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("content type %q", resp.Header.Get("Content-Type"))
			}
			if tc.notInBody != "" && strings.Contains(body, tc.notInBody) {
				t.Errorf("body leaks %q: %s", tc.notInBody, body)
			}
			if got := h.primary.calls.Load() > 0; got != tc.forwarded {
				t.Errorf("forwarded = %v, want %v", got, tc.forwarded)
			}
			h.rec.mu.Lock()
			n := len(h.rec.txs)
			h.rec.mu.Unlock()
			if (n > 0) != tc.recorded {
				t.Fatalf("recorded %d transactions, want recorded=%v", n, tc.recorded)
			}
			if tc.recorded {
				tx := h.rec.last(t)
				if tx.Verdict != custody.Rejected || tx.Code != tc.code || tx.Status != tc.status {
					t.Errorf("recorded verdict %s code %s status %d", tx.Verdict, tx.Code, tx.Status)
				}
				if resp.Header.Get("Custody-Verdict") != "rejected" || resp.Header.Get("Custody-Request-Id") != tx.ID {
					t.Errorf("headers %v", resp.Header)
				}
			}
		})
	}
}

func TestFallbackIsServedAndShown(t *testing.T) {
	h := newHarness(t, testConfig)
	h.primary.status = 500
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Custody-Fallback") != "primary>backup" || resp.Header.Get("Custody-Provider") != "backup" {
		t.Errorf("fallback headers: %v", resp.Header)
	}
	if tx := h.rec.last(t); tx.Decision != "fallback" || len(tx.FallbackChain) != 2 {
		t.Errorf("recorded %+v", tx)
	}
}

func TestReplayedResponseRejected(t *testing.T) {
	h := newHarness(t, testConfig)
	h.primary.mutate = func(m map[string]any, _ *http.Request) { m["id"] = "chatcmpl-same" }
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "first", false))
	if resp.StatusCode != 200 {
		t.Fatalf("first: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "second", false))
	if resp.StatusCode != 502 || errCode(t, body) != string(custody.CodeResponseReplayed) {
		t.Fatalf("second: %d %s", resp.StatusCode, body)
	}
}

func TestStreamInterleaveEndsWithErrorEvent(t *testing.T) {
	h := newHarness(t, testConfig)
	h.primary.stream = func(w io.Writer, id string, usage int) {
		fmt.Fprintf(w, "data: {\"id\":%q,\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n", id)
		fmt.Fprintf(w, "data: {\"id\":\"other\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
	resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if strings.Contains(body, "[DONE]") || !strings.Contains(body, `"code":"stream_inconsistent"`) || strings.Contains(body, `"content":"b"`) {
		t.Fatalf("stream body: %s", body)
	}
	if tx := h.rec.last(t); tx.Code != custody.CodeStreamInconsistent {
		t.Errorf("recorded %s", tx.Code)
	}
}

func TestModelsListIsPerTenant(t *testing.T) {
	h := newHarness(t, testConfig)
	_, body := h.do("GET", "/v1/models", "sk-beta", "")
	if !strings.Contains(body, `"small"`) || strings.Contains(body, `"big"`) {
		t.Errorf("beta sees %s", body)
	}
	_, body = h.do("GET", "/v1/models", "sk-acme", "")
	if !strings.Contains(body, `"small"`) || !strings.Contains(body, `"big"`) {
		t.Errorf("acme sees %s", body)
	}
	resp, _ := h.do("GET", "/v1/models", "", "")
	if resp.StatusCode != 401 {
		t.Errorf("anonymous got %d", resp.StatusCode)
	}
}

func TestAnonymousLoopbackTenant(t *testing.T) {
	cfg := strings.Replace(testConfig, "  - id: beta\n", "  - id: local\n    anonymous_loopback: true\n  - id: beta\n", 1)
	h := newHarness(t, cfg)
	resp, body := h.do("POST", "/v1/chat/completions", "", chat("small", "hi", false))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if tx := h.rec.last(t); tx.Tenant != "local" {
		t.Errorf("tenant %q", tx.Tenant)
	}
	if isLoopback("203.0.113.5:1234") || !isLoopback("[::1]:80") {
		t.Error("isLoopback")
	}
}
