package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/gateway"
	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
)

// marker is written into every prompt the tests send; it must appear in
// no export, metric or log line.
const marker = "PROMPT-MARKER-7f3a9c"

// memRecorder keeps transactions in memory.
type memRecorder struct {
	mu  sync.Mutex
	txs []custody.Transaction
}

func (m *memRecorder) Salts(string) (a, b [32]byte) { a[0], b[0] = 1, 2; return }
func (m *memRecorder) Record(_ context.Context, tx *custody.Transaction) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.txs = append(m.txs, *tx)
	return nil
}

// stack is a gateway in front of simulators: model "sim-1" is served
// honestly, "liar-1" by a simulator that silently swaps the model (a
// rejection), and "fallback-1" by a broken route then the honest one.
type stack struct {
	t        testing.TB
	srv      *httptest.Server
	logs     *syncBuffer
	upstream *headerLog
	// serving counts the gateway's handlers still running: a client
	// may read a whole answer before the handler that wrote it has
	// logged and counted its transaction.
	serving sync.WaitGroup
}

const stackConfig = `
admin_keys: [adm-1]
tenants:
  - {id: acme, api_keys: [sk-acme], policy: open}
providers:
  - {name: sim, kind: openai, base_url: "SIM", request_id_echo: x-request-id, timeout: 5s}
  - {name: liar, kind: openai, base_url: "LIAR", timeout: 5s}
  - {name: broken, kind: openai, base_url: "BROKEN", timeout: 5s}
models:
  - {name: sim-1, tokenizer: o200k_base, context_window: 32768, routes: [{provider: sim, model: sim-1}]}
  - {name: liar-1, tokenizer: o200k_base, context_window: 32768, routes: [{provider: liar, model: sim-1}]}
  - {name: fallback-1, tokenizer: o200k_base, context_window: 32768, routes: [{provider: broken, model: sim-1}, {provider: sim, model: sim-1}]}
policies:
  - {name: open, fallback: allow}
`

// syncBuffer is a bytes.Buffer safe for the gateway's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// headerLog wraps an upstream and keeps the traceparents it was sent.
type headerLog struct {
	h  http.Handler
	mu sync.Mutex
	tp []string
}

func (l *headerLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.tp = append(l.tp, r.Header.Get("Traceparent"))
	l.mu.Unlock()
	l.h.ServeHTTP(w, r)
}

func (l *headerLog) traceparents() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.tp...)
}

func newStack(t testing.TB, obs gateway.Observer, tr gateway.Tracer) *stack {
	t.Helper()
	counter, err := tokenize.Lookup("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	newSim := func(faults ...sim.Fault) http.Handler {
		s, err := sim.New(sim.Config{Models: []string{"sim-1"}, Counter: counter, Faults: faults})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	st := &stack{t: t, logs: &syncBuffer{}, upstream: &headerLog{h: newSim()}}
	honest := httptest.NewServer(st.upstream)
	liar := httptest.NewServer(newSim(sim.FaultSilentFallback))
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"down","type":"server_error"}}`, http.StatusInternalServerError)
	}))
	for _, s := range []*httptest.Server{honest, liar, broken} {
		t.Cleanup(s.Close)
	}
	yaml := strings.NewReplacer("SIM", honest.URL+"/v1", "LIAR", liar.URL+"/v1", "BROKEN", broken.URL+"/v1").Replace(stackConfig)
	cfg, err := config.Parse("test.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*upstream.Client{}
	for _, p := range cfg.Providers {
		clients[p.Name] = upstream.New(upstream.Config{Name: p.Name, BaseURL: p.BaseURL, Timeout: p.Timeout,
			RequestIDEcho: p.RequestIDEcho, BreakerThreshold: p.BreakerThreshold, BreakerCooldown: p.BreakerCooldown})
	}
	opts := gateway.Options{Config: cfg, Clients: clients, Recorder: &memRecorder{},
		Logger: slog.New(slog.NewJSONHandler(st.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Observer: obs}
	if tr != nil {
		opts.Tracer = tr
	}
	gw, err := gateway.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	st.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.serving.Add(1)
		defer st.serving.Done()
		gw.ServeHTTP(w, r)
	}))
	t.Cleanup(st.srv.Close)
	return st
}

// chat sends a chat completion carrying the marker and returns the
// response's status and Custody-Verdict once the gateway's handler has
// returned (its log line written, its metrics and span ended).
func (s *stack) chat(model string, stream bool, hdr ...string) (int, string) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"model": model, "stream": stream,
		"messages": []any{map[string]any{"role": "user", "content": "Tell me about " + marker + " please"}}})
	req, _ := http.NewRequest("POST", s.srv.URL+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-acme")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	s.serving.Wait()
	if v := resp.Header.Get("Custody-Verdict"); v != "pending" {
		return resp.StatusCode, v
	}
	// A stream's verdict comes after its body, in the trailer.
	return resp.StatusCode, resp.Trailer.Get("Custody-Verdict")
}
