package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/upstream"
)

// TestProviderProbes: each provider's GET {base_url}/models is probed in
// the background; /readyz names what each URL answered (a base_url
// without /v1 included) and stays ready whatever they answered.
func TestProviderProbes(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Method != "GET" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-up" {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"big-0827"},{"id":"other"}]}`)
	})
	up := httptest.NewServer(api)
	defer up.Close()
	// silent never answers: its probe ends when the probe's own timeout
	// (the provider's, 5s) gives up.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	yaml := `
tenants: [{id: acme, api_keys: [sk-acme]}]
providers:
  - {name: good, kind: openai, base_url: "` + up.URL + `/v1", api_key: sk-up}
  - {name: nov1, kind: openai, base_url: "` + up.URL + `", api_key: sk-up}
  - {name: badkey, kind: openai, base_url: "` + up.URL + `/v1", api_key: wrong}
  - {name: silent, kind: openai, base_url: "` + slow.URL + `/v1", timeout: 5s}
models:
  - name: big
    context_window: 100
    routes: [{provider: good, model: big-0827}, {provider: nov1, model: big-0827}, {provider: badkey}, {provider: silent}]
`
	cfg, err := config.Parse("test.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*upstream.Client{}
	for _, p := range cfg.Providers {
		clients[p.Name] = upstream.New(upstream.Config{Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Timeout: p.Timeout})
	}
	gw, err := New(Options{Config: cfg, Clients: clients, Recorder: &memRecorder{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	readyz := func() (int, string) {
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// ProbeProviders returns at once: had it waited for silent, whose
	// probe cannot end before its 5s timeout, silent would read FAILED
	// here, not pending (5s is the margin for a loaded machine's delays
	// between the call's return and /readyz's answer; no duration is
	// asserted).
	gw.ProbeProviders()
	if status, body := readyz(); status != 200 || !strings.Contains(body, "provider silent: GET "+slow.URL+"/v1/models: pending") {
		t.Errorf("while probing: %d\n%s", status, body)
	}
	var status int
	var body string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if status, body = readyz(); !strings.Contains(body, "pending") {
			break
		}
	}
	if status != 200 || !strings.HasPrefix(body, "ready\n") {
		t.Errorf("readiness depends on the probes: %d\n%s", status, body)
	}
	for _, want := range []string{
		"provider good: GET " + up.URL + "/v1/models: ok, 2 models\n",
		"provider nov1: GET " + up.URL + "/models: FAILED, 404: base_url " + up.URL + " does not end in /v1",
		"provider badkey: GET " + up.URL + "/v1/models: FAILED, 401: the upstream refused the provider's api_key",
		"provider badkey: GET " + up.URL + "/v1/models: FAILED, 401", // not "not listed": it never answered a list
		"provider silent: GET " + slow.URL + "/v1/models: FAILED, no answer",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz lacks %q:\n%s", want, body)
		}
	}
	if ps := gw.ProviderProbes(); len(ps) != 4 || !ps[0].OK || ps[1].Status != 404 {
		t.Errorf("probes %+v", ps)
	}
}
