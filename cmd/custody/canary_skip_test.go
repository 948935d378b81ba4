package main

import (
	"strings"
	"testing"
	"time"
)

// TestCanarySkippedProbes: on a 64-token model the needle prompt cannot
// hold its needles within half of capacity, so `custody canary` prints the
// needle row as skipped, with its reason, and exits 0 when the others
// pass; `custody serve` warns about it at start, naming probe and route.
func TestCanarySkippedProbes(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
tenants: [{id: acme, api_keys: [sk-acme]}]
canaries: {probes: [echo, needle]}
providers:
  - {name: up, kind: sim, request_id_echo: x-request-id}
models:
  - {name: tiny-1, context_window: 64, routes: [{provider: up}]}
`)
	code, out, errOut := runCmd(t, dir, "canary", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "tiny-1/up" {
			rows[f[1]] = f
		}
	}
	if r := rows["needle"]; len(r) < 5 || r[2] != "skipped" || !strings.Contains(strings.Join(r, " "), "needles alone take") {
		t.Errorf("needle row %q:\n%s", r, out)
	}
	if r := rows["echo"]; len(r) < 3 || r[2] != "ok" {
		t.Errorf("echo row %q:\n%s", r, out)
	}
	s := startServe(t, dir, "--config", cfg)
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs := s.stdout.String() + s.stderr.String()
		if strings.Contains(logs, "canary probe cannot run") && strings.Contains(logs, `"probe":"needle"`) && strings.Contains(logs, `"route":"tiny-1/up"`) && strings.Contains(logs, "needles alone take") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start-up warning for the skipped needle probe:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
