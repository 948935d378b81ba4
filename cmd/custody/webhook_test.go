package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody/internal/refused"
	"github.com/custody-gateway/custody/notify"
)

// TestFallbackEventsReachTheWebhook: a primary that is down makes the
// request fall back; the fallback is served, shown in the headers, on the
// timeline, and POSTed, signed, to the webhook.
func TestFallbackEventsReachTheWebhook(t *testing.T) {
	t.Parallel() // its own data dir and ports
	var (
		mu     sync.Mutex
		events []map[string]any
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := notify.Verify("hook-secret", r.Header.Get("Custody-Signature"), body, time.Now(), time.Minute); err != nil {
			t.Errorf("webhook signature: %v", err)
			w.WriteHeader(400)
			return
		}
		var e map[string]any
		json.Unmarshal(body, &e)
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	defer recv.Close()
	// A port with nothing listening: the primary is down.
	down := "http://" + refused.Addr(t) + "/v1"

	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, `
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme]}]
providers:
  - {name: primary, kind: openai, base_url: "`+down+`"}
  - {name: backup, kind: sim}
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: primary}, {provider: backup}]}
webhooks:
  - {url: "`+recv.URL+`", secret: hook-secret, events: [fallback]}
`))
	resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "fall back please", false))
	if resp.StatusCode != 200 || resp.Header.Get("Custody-Fallback") != "primary>backup" {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, body)
	}
	id := resp.Header.Get("Custody-Request-Id")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook delivery")
		}
	}
	mu.Lock()
	e := events[0]
	mu.Unlock()
	if e["type"] != "fallback" || e["request_id"] != id || e["detail"] != "primary>backup" {
		t.Fatalf("delivered %v", e)
	}
	_, timeline := get(t, s.URL+"/v1/custody/events?type=fallback", "adm-test")
	if !strings.Contains(timeline, id) {
		t.Fatalf("fallback not on the timeline: %s", timeline)
	}
	if metrics, ok := metricReaches(t, s, `custody_fallbacks_total{from="primary",model="sim-1",to="backup"}`, 1); !ok {
		t.Fatalf("fallback not counted:\n%s", grep(metrics, "custody_fallbacks"))
	}
}

func grep(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
