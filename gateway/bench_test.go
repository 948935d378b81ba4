package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/upstream"
)

// The proxy path measured three ways over loopback, in one run: direct
// calls to the simulator, a bare httputil.ReverseProxy, and custody with
// every check on (the ledger replaced by memory: bench/ measures the
// durable ledger). Compare ns/op: custody's cost is its ns/op minus the
// direct one, against the bare proxy's. The full harness with open-loop
// latency, CPU and RSS is `go run ./bench`.
func BenchmarkProxyPath(b *testing.B) {
	benchProxyPath(b, "openai", upstream.Config{}, "/v1/chat/completions",
		`{"model":"sim-1","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"What is the capital of France? Answer k9XbQ2mZ7w."}]}`)
}

// BenchmarkProxyPathStream is BenchmarkProxyPath for a streamed answer:
// the SSE reader, the stream's wire, its checks and its relay.
func BenchmarkProxyPathStream(b *testing.B) {
	benchProxyPath(b, "openai", upstream.Config{}, "/v1/chat/completions",
		`{"model":"sim-1","stream":true,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"What is the capital of France? Answer k9XbQ2mZ7w."}]}`)
}

// BenchmarkProxyPathMessages is BenchmarkProxyPath for a Messages client
// passed through to a kind: anthropic provider (the sim speaks Messages):
// the Messages wire's parse, strict members, texts and contract.
func BenchmarkProxyPathMessages(b *testing.B) {
	benchProxyPath(b, "anthropic", upstream.Config{Anthropic: true}, "/v1/messages",
		`{"model":"sim-1","max_tokens":64,"system":"You are terse.","messages":[{"role":"user","content":"What is the capital of France? Answer k9XbQ2mZ7w."}]}`)
}

// benchProxyPath measures body sent to path three ways (direct, bare
// proxy, custody), custody's one provider of the kind given, its client
// configured as cc.
func benchProxyPath(b *testing.B, kind string, cc upstream.Config, path, body string) {
	s, err := sim.New(sim.Config{Models: []string{"sim-1"}, Counter: o200k(&testing.T{})})
	if err != nil {
		b.Fatal(err)
	}
	up := httptest.NewServer(s)
	defer up.Close()
	target, _ := url.Parse(up.URL)
	bare := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer bare.Close()

	yaml := strings.NewReplacer("URL", up.URL, "KIND", kind).Replace(`
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: sim, kind: KIND, base_url: "URL/v1", request_id_echo: x-request-id}]
models: [{name: sim-1, context_window: 32768, routes: [{provider: sim}]}]
`)
	cfg, err := config.Parse("bench.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	cc.Name, cc.BaseURL, cc.Timeout = "sim", up.URL+"/v1", cfg.Providers[0].Timeout
	clients := map[string]*upstream.Client{"sim": upstream.New(cc)}
	gw, err := New(Options{Config: cfg, Clients: clients, Recorder: &memRecorder{discard: true}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	custody := httptest.NewServer(gw)
	defer custody.Close()

	for _, tc := range []struct{ name, url string }{
		{"direct", up.URL}, {"bare-proxy", bare.URL}, {"custody", custody.URL},
	} {
		b.Run(tc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("POST", tc.url+path, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer sk-acme")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
}
