package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStartProbesProviders: `custody serve` starts with a base_url that
// lacks /v1 (it never waits for an upstream), logs what GET
// {base_url}/models answered, and /readyz says it, staying ready.
func TestStartProbesProviders(t *testing.T) {
	t.Parallel() // its own data dir and ports
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data":[{"id":"m-1"}]}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer up.Close()
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, `
tenants: [{id: acme, api_keys: [sk-acme]}]
providers:
  - {name: nov1, kind: openai, base_url: "`+up.URL+`"}
  - {name: local, kind: sim}
models: [{name: m-1, context_window: 8192, routes: [{provider: nov1}, {provider: local, model: sim-1}]}]
`))
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, b := get(t, s.URL+"/readyz", "")
		if resp.StatusCode != 200 {
			t.Fatalf("/readyz %d: %s", resp.StatusCode, b)
		}
		if body = b; !strings.Contains(body, "pending") {
			break
		}
	}
	for _, want := range []string{"provider nov1: GET " + up.URL + "/models: FAILED, 404: base_url " + up.URL + " does not end in /v1",
		"provider local: GET http://127.0.0.1:"} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz lacks %q:\n%s", want, body)
		}
	}
	t.Logf("/readyz:\n%s", body)
	// The log line reaches stderr through a pipe, and may come a moment
	// after /readyz shows the probe's result.
	waitFor(t, 10*time.Second, func() bool {
		return strings.Contains(s.stderr.String(), `"msg":"provider probe","provider":"nov1"`)
	}, "the probe's log line on stderr")
}
