package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGracefulShutdown: on SIGTERM custody stops accepting, finishes the
// requests in flight, flushes the ledger and exits 0; what it answered is
// in the log after a restart.
func TestGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: slow, kind: sim, sim: {token_delay: 40ms}}]
models: [{name: sim-1, context_window: 32768, routes: [{provider: slow}]}]
`)
	s := startServe(t, dir, "--config", cfg)
	type result struct {
		status int
		id     string
		body   string
	}
	done := make(chan result, 1)
	go func() {
		resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "a slow stream", true))
		done <- result{resp.StatusCode, resp.Header.Get("Custody-Request-Id"), body}
	}()
	time.Sleep(300 * time.Millisecond) // the stream is under way
	s.cmd.Process.Signal(syscall.SIGTERM)
	r := <-done
	if r.status != 200 || !strings.HasSuffix(strings.TrimSpace(r.body), "data: [DONE]") {
		t.Fatalf("in-flight stream not finished on SIGTERM: %d %.300s", r.status, r.body)
	}
	select {
	case err := <-s.waitErr:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, s.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("custody did not exit after SIGTERM")
	}
	s2 := startServe(t, dir, "--config", cfg)
	if resp, body := get(t, s2.URL+"/v1/custody/records?request_id="+r.id, "adm-test"); !strings.Contains(body, r.id) {
		t.Fatalf("the finished request is not recorded: %d %s", resp.StatusCode, body)
	}
}
