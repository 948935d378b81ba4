package console

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/custody-gateway/custody/adminapi"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody/canary"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/eval"
	"github.com/custody-gateway/custody/gateway"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/recorder"
	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
	"github.com/custody-gateway/custody/verify"
)

const (
	adminKey = "adm-console-test-key"
	// marker is in every prompt sent; no page may show it.
	marker = "PROMPT-MARKER-51d2e8"
)

const testConfig = `
admin_keys: [ADMIN]
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

var (
	counterOnce sync.Once
	counter     tokenize.Counter
)

// env is a real gateway (sim upstreams, ledger, sqlite index) with the
// console mounted at /ui/, after some traffic.
type env struct {
	t       testing.TB
	srv     *httptest.Server
	console *Console
	idx     index.Index
	log     *ledger.Log
	// sent are the transactions sent, by request id: the exact request
	// and response bytes, for the receipt check.
	sent   map[string]exchange
	ids    struct{ verified, rejected, fallback string }
	canary *canary.Runner
	evals  *eval.Runner // nil without suites
	// evalRecords counts the records of eval runs: each case's exchange
	// and each run's leaf.
	evalRecords atomic.Int64
	gw          *gateway.Gateway
}

// envOptions vary newEnvWith's gateway.
type envOptions struct {
	tls bool
	// evals are suites (name -> JSONL cases) covering sim-1/sim; the
	// policy "summaries" requires the first of evalOrder.
	evals     map[string]string
	evalOrder []string
}

type exchange struct {
	model             string
	request, response []byte
	verdict           string
}

func newEnv(t testing.TB, tls bool) *env {
	t.Helper()
	return newEnvWith(t, envOptions{tls: tls})
}

func newEnvWith(t testing.TB, o envOptions) *env {
	t.Helper()
	tls := o.tls
	ctx := context.Background()
	counterOnce.Do(func() {
		var err error
		if counter, err = tokenize.Lookup("o200k_base"); err != nil {
			t.Fatal(err)
		}
	})
	newSim := func(faults ...sim.Fault) http.Handler {
		s, err := sim.New(sim.Config{Models: []string{"sim-1"}, Counter: counter, Faults: faults})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	honest := httptest.NewServer(newSim())
	liar := httptest.NewServer(newSim(sim.FaultSilentFallback))
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"down","type":"server_error"}}`, http.StatusInternalServerError)
	}))
	for _, s := range []*httptest.Server{honest, liar, broken} {
		t.Cleanup(s.Close)
	}
	yaml := strings.NewReplacer("ADMIN", adminKey, "SIM", honest.URL+"/v1", "LIAR", liar.URL+"/v1", "BROKEN", broken.URL+"/v1").Replace(testConfig)
	dir := t.TempDir()
	if len(o.evalOrder) > 0 {
		yaml += "  - {name: summaries, fallback: allow, require_evals: [" + o.evalOrder[0] + "]}\nevals:\n"
		for _, name := range o.evalOrder {
			f := filepath.Join(dir, name+".jsonl")
			if err := os.WriteFile(f, []byte(o.evals[name]), 0o600); err != nil {
				t.Fatal(err)
			}
			yaml += "  - {name: " + name + ", file: \"" + f + "\", routes: [sim-1/sim], rate: 50}\n"
		}
	}
	cfg, err := config.Parse("test.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	lg, err := ledger.Open(ctx, ledger.Config{Dir: filepath.Join(dir, "ledger"), CheckpointInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close(context.Background()) })
	idx, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec, err := recorder.New(ctx, recorder.Config{Log: lg, Index: idx, TenantIDs: []string{"acme"}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	clients := map[string]*upstream.Client{}
	for _, p := range cfg.Providers {
		clients[p.Name] = upstream.New(upstream.Config{Name: p.Name, BaseURL: p.BaseURL, Timeout: p.Timeout,
			RequestIDEcho: p.RequestIDEcho, BreakerThreshold: p.BreakerThreshold, BreakerCooldown: p.BreakerCooldown})
	}
	src, err := verify.OpenSource(filepath.Join(dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	var gw *gateway.Gateway
	api := adminapi.New(adminapi.Config{Config: cfg, Recorder: rec, Index: idx, Log: lg})
	con, err := New(Config{
		IsAdminKey:    func(k string) bool { return gw.IsAdminKey(k) },
		API:           api.InProcess(),
		Log:           lg,
		VerifyReceipt: LedgerVerifier(src, lg.Verifier()),
		Logger:        logger,
		Models:        modelNames(cfg),
		EventsPage:    4,
	})
	if err != nil {
		t.Fatal(err)
	}
	mounts := api.Mounts()
	mounts[Prefix] = con
	gw, err = gateway.New(gateway.Options{Config: cfg, Clients: clients, Recorder: rec, Logger: logger, Mounts: mounts})
	if err != nil {
		t.Fatal(err)
	}
	api.Bind(gw)
	// Canaries probe every route through the gateway, as serve runs them;
	// their events go to the timeline as serve writes them.
	runner, err := canary.New(ctx, canary.Config{Routes: canary.Routes(gw.Routes()), Probes: []string{canary.ProbeEcho},
		OnEvent: func(ce canary.Event) {
			if err := idx.AddEvents(context.Background(), index.CanaryEvent(ce.Time, string(ce.Kind), ce.Model, ce.Name, ce.Probe, ce.Detail)); err != nil {
				t.Error(err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	gw.SetCanaries(runner)
	api.SetRunners(runner, nil)
	e := &env{t: t, console: con, idx: idx, log: lg, sent: map[string]exchange{}, canary: runner, gw: gw}
	if len(o.evalOrder) > 0 {
		// As serve runs them: each run's leaf (and so its event) recorded.
		suites, err := eval.Suites(cfg.Evals)
		if err != nil {
			t.Fatal(err)
		}
		if e.evals, err = eval.New(ctx, eval.Config{Suites: suites, Routes: eval.Routes(gw.Routes()), RetryMin: -1,
			OnRun: func(rep eval.Report) string {
				e.evalRecords.Add(int64(len(rep.Cases) + 1))
				id, err := gw.RecordEval(context.Background(), rep.Transaction())
				if err != nil {
					t.Error(err)
				}
				return id
			}}); err != nil {
			t.Fatal(err)
		}
		gw.SetEvals(e.evals)
		api.SetRunners(runner, e.evals)
	}
	if tls {
		e.srv = httptest.NewTLSServer(gw)
	} else {
		e.srv = httptest.NewServer(gw)
	}
	t.Cleanup(e.srv.Close)
	e.traffic()
	return e
}

// traffic sends two honest calls, one rejection and one fallback, then
// runs the canaries twice (the liar's and the broken route fail their
// echo probe twice and are quarantined), then waits until the index holds
// all of it and the log has integrated it.
func (e *env) traffic() {
	t := e.t
	for i, c := range []struct{ model, verdict string }{
		{"sim-1", "verified"}, {"sim-1", "verified"}, {"liar-1", "rejected"}, {"fallback-1", "verified"},
	} {
		body, _ := json.Marshal(map[string]any{"model": c.model,
			"messages": []any{map[string]any{"role": "user", "content": "Question " + marker + " number " + string(rune('a'+i))}}})
		resp, respBody := e.do("POST", "/v1/chat/completions", "sk-acme", body)
		id := resp.Header.Get("Custody-Request-Id")
		if got := resp.Header.Get("Custody-Verdict"); got != c.verdict || id == "" {
			t.Fatalf("%s: verdict %q id %q: %s", c.model, got, id, respBody)
		}
		e.sent[id] = exchange{model: c.model, request: body, response: respBody, verdict: c.verdict}
		switch {
		case c.verdict == "rejected":
			e.ids.rejected = id
		case c.model == "fallback-1":
			e.ids.fallback = id
		default:
			e.ids.verified = id
		}
	}
	probes := 0
	for range 2 {
		for _, rep := range e.canary.RunOnce(context.Background()) {
			probes += len(rep.Results)
		}
	}
	if !e.canary.Quarantined("liar-1", 0) {
		t.Fatalf("the liar's route is not quarantined: %+v", e.canary.Last())
	}
	if e.evals != nil {
		// The first client request on sim-1/sim was a path change, which
		// ran the suites in the background; then they run on demand.
		e.evals.Wait()
		if _, err := e.evals.RunOnce(context.Background(), eval.RunOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	want := len(e.sent) + probes + int(e.evalRecords.Load())
	for {
		recs, err := e.idx.Search(context.Background(), index.Query{Limit: index.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) >= want && e.log.Size() >= uint64(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("index holds %d records, log %d leaves; want %d", len(recs), e.log.Size(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A receipt carries its inclusion proof once a checkpoint covers it.
	for time.Now().Before(deadline) {
		_, b := e.do("GET", "/v1/custody/receipts/"+e.ids.verified, "sk-acme", nil)
		if bytes.Contains(b, []byte(`"checkpoint"`)) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no checkpoint covers the traffic")
}

func (e *env) do(method, path, key string, body []byte) (*http.Response, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// receipt is the tenant's receipt of id, from the gateway's API.
func (e *env) receipt(id string) []byte {
	e.t.Helper()
	resp, b := e.do("GET", "/v1/custody/receipts/"+id, "sk-acme", nil)
	if resp.StatusCode != 200 {
		e.t.Fatalf("receipt %s: %d %s", id, resp.StatusCode, b)
	}
	return b
}

// modelNames are cfg's client-facing model names, as serve gives them.
func modelNames(cfg *config.Config) []string {
	names := make([]string, len(cfg.Models))
	for i, m := range cfg.Models {
		names[i] = m.Name
	}
	return names
}
