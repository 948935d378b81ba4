package canary

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/tokenize"
)

// o200k loads the counter once for the whole test binary.
var o200k = sync.OnceValues(func() (tokenize.Counter, error) { return tokenize.Lookup("o200k_base") })

func counter(t testing.TB) tokenize.Counter {
	t.Helper()
	c, err := o200k()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newSim starts a simulator that honours X-Sim-Fault.
func newSim(t testing.TB, cfg sim.Config) string {
	t.Helper()
	cfg.AllowFaultHeader = true
	if cfg.Counter == nil {
		cfg.Counter = counter(t)
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// simTarget is a Target that calls the simulator directly. It has none of
// custody's checks but one, the prompt-token band's lower edge (enough to
// show the needle probe reporting custody's code), when checkPrompt.
type simTarget struct {
	name        string
	capacity    int
	base        string
	model       string
	counter     tokenize.Counter
	checkPrompt bool
	// noSalt leaves cache_salt out; by default every request carries its
	// tenant as cache_salt, as custody's per-tenant salt will.
	noSalt bool
	// noCache sends cache_prompt: false (as cache_isolation: disable).
	noCache bool

	fault atomic.Pointer[string] // X-Sim-Fault for every request
	chats atomic.Int64
	// block, when set, is waited on by every Chat (to hold a run open).
	block chan struct{}
	// clock, when set, is the simulator's model clock (its Config.Sleep):
	// a request's time to first byte is the model time it spent.
	clock *modelClock
}

func (s *simTarget) Name() string  { return s.name }
func (s *simTarget) Capacity() int { return s.capacity }

func (s *simTarget) setFault(f string) { s.fault.Store(&f) }

// salted adds "cache_salt" to an encoded request: the tenant, or the
// default canary tenant's name for "".
func salted(body []byte, tenant string) []byte {
	if tenant == "" {
		tenant = "custody-canary"
	}
	salt, _ := json.Marshal("salt:" + tenant)
	return append(append(append([]byte(`{"cache_salt":`), salt...), ','), body[1:]...)
}

func (s *simTarget) post(ctx context.Context, req ChatRequest) (int, []byte, time.Duration, error) {
	body, err := req.Body(s.model)
	if err != nil {
		return 0, nil, 0, err
	}
	if !s.noSalt {
		body = salted(body, req.Tenant)
	}
	if s.noCache {
		body = append([]byte(`{"cache_prompt":false,`), body[1:]...)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if req.Tenant != "" {
		hr.Header.Set("X-Tenant", req.Tenant)
	}
	if f := s.fault.Load(); f != nil && *f != "" {
		hr.Header.Set("X-Sim-Fault", *f)
	}
	start, modelStart := time.Now(), s.clock.read()
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, nil, 0, err
	}
	ttfb := time.Since(start) // the simulator writes headers and body together
	if s.clock != nil {
		ttfb = s.clock.read() - modelStart
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, ttfb, err
}

func (s *simTarget) Chat(ctx context.Context, req ChatRequest) (Result, error) {
	s.chats.Add(1)
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	status, body, ttfb, err := s.post(ctx, req)
	if err != nil {
		return Result{}, err
	}
	if status == http.StatusOK && s.checkPrompt {
		var u struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		msgs := make([]tokenize.Message, len(req.Messages))
		for i, m := range req.Messages {
			msgs[i] = tokenize.Message{Role: m.Role, Content: m.Content}
		}
		if json.Unmarshal(body, &u) == nil && u.Usage.PromptTokens < tokenize.Chat(s.counter, msgs) {
			return Result{Status: http.StatusBadGateway, Body: []byte(`{"error":{"code":"prompt_token_mismatch"}}`), Code: "prompt_token_mismatch"}, nil
		}
	}
	return Result{Status: status, Body: body, TTFB: ttfb}, nil
}

func (s *simTarget) Direct(ctx context.Context, req ChatRequest) (Result, error) {
	status, body, ttfb, err := s.post(ctx, req)
	return Result{Status: status, Body: body, TTFB: ttfb}, err
}

func newTarget(t testing.TB, base string, capacity int) *simTarget {
	return &simTarget{name: "sim-1/sim", capacity: capacity, base: base, model: "sim-1", counter: counter(t), checkPrompt: true}
}

// memSecrets is a stand-in for the contamination package's Detector
// (AddSecret/RemoveSecret, then a scan of every response), which is not on
// this branch: a substring matcher over the registered secrets.
type memSecrets struct {
	mu sync.Mutex
	m  map[string]string // secret -> label
}

func newMemSecrets() *memSecrets { return &memSecrets{m: map[string]string{}} }

func (m *memSecrets) add(secret, label string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[secret] = label
}

func (m *memSecrets) remove(secret string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, secret)
}

func (m *memSecrets) scan(text []byte) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for s, l := range m.m {
		if bytes.Contains(text, []byte(s)) {
			return l, true
		}
	}
	return "", false
}

func (m *memSecrets) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

func newRunner(t testing.TB, cfg Config) *Runner {
	t.Helper()
	if cfg.Counter == nil {
		cfg.Counter = counter(t)
	}
	r, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func resultOf(rep Report, probe string) ProbeResult {
	for _, res := range rep.Results {
		if res.Probe == probe {
			return res
		}
	}
	return ProbeResult{Probe: probe, Evidence: fmt.Sprintf("probe %s did not run", probe)}
}
