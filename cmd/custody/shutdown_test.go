package main

import (
	"bufio"
	"io"
	"net/http"
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
	req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(chatBody("sim-1", "a slow stream", true)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	id := resp.Header.Get("Custody-Request-Id")
	br := bufio.NewReader(resp.Body)
	if first, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(first, "data: ") {
		t.Fatalf("stream did not start: %q %v", first, err)
	}
	s.cmd.Process.Signal(syscall.SIGTERM) // the stream is under way
	rest, _ := io.ReadAll(br)
	if resp.StatusCode != 200 || !strings.HasSuffix(strings.TrimSpace(string(rest)), "data: [DONE]") {
		t.Fatalf("in-flight stream not finished on SIGTERM: %d %.300s", resp.StatusCode, rest)
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
	if resp, body := get(t, s2.URL+"/v1/custody/records?request_id="+id, "adm-test"); !strings.Contains(body, id) {
		t.Fatalf("the finished request is not recorded: %d %s", resp.StatusCode, body)
	}
}
