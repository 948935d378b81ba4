//go:build unix

package main

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const pprofConfig = `
admin_keys: [adm-test]
debug: {pprof: true}
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: sim, kind: sim, request_id_echo: x-request-id}
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: sim}]}
`

// TestPProfBehindAdminKey: debug.pprof serves the profiler to admin keys
// only, OpenAI-shaped refusals to everyone else, and nothing at all when
// it is off (the default).
func TestPProfBehindAdminKey(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, pprofConfig))
	for _, c := range []struct {
		name, key string
		status    int
		want      string
	}{
		{"admin key", "adm-test", http.StatusOK, "goroutine"},
		{"no key", "", http.StatusUnauthorized, `"code":"unauthorized"`},
		{"wrong key", "adm-wrong", http.StatusUnauthorized, `"code":"unauthorized"`},
		{"tenant key", "sk-acme", http.StatusForbidden, `"code":"forbidden"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := get(t, s.URL+"/debug/pprof/", c.key)
			if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("status %d, body %.300s; want %d with %q", resp.StatusCode, body, c.status, c.want)
			}
		})
	}
	// A CPU profile is one request (the gzipped protobuf pprof reads).
	resp, body := get(t, s.URL+"/debug/pprof/profile?seconds=1", "adm-test")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "\x1f\x8b") {
		t.Fatalf("profile: status %d, %d bytes starting %q", resp.StatusCode, len(body), body[:min(len(body), 8)])
	}

	off := t.TempDir()
	s2 := startServe(t, off, "--config", writeConfig(t, off, strings.Replace(pprofConfig, "debug: {pprof: true}\n", "", 1)))
	if resp, body := get(t, s2.URL+"/debug/pprof/", "adm-test"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("pprof off: status %d, body %.300s; want 404", resp.StatusCode, body)
	}
}

var (
	fsyncsLine  = regexp.MustCompile(`(?m)^custody_ledger_fsyncs_total (\d+)`)
	commitsLine = regexp.MustCompile(`(?m)^custody_ledger_commit_seconds_count (\d+)`)
)

// TestLedgerFsyncsMetric: every acknowledged transaction was made durable
// by a journal group commit, and /metrics counts them and their times.
func TestLedgerFsyncsMetric(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, pprofConfig))
	metric := func(body string, re *regexp.Regexp) int {
		m := re.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %s in /metrics:\n%.2000s", re, body)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	syncs := func() int {
		_, body := get(t, s.URL+"/metrics", "")
		return metric(body, fsyncsLine)
	}
	before := syncs()
	for range 3 {
		resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"sim-1","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	}
	// One request at a time: each leaf is its own group.
	_, body := get(t, s.URL+"/metrics", "")
	after, commits := metric(body, fsyncsLine), metric(body, commitsLine)
	if after < before+3 {
		t.Fatalf("custody_ledger_fsyncs_total went from %d to %d over 3 sequential transactions", before, after)
	}
	// Every successful fsync is a timed commit (none failed here).
	if commits != after {
		t.Fatalf("custody_ledger_commit_seconds_count %d, custody_ledger_fsyncs_total %d", commits, after)
	}
	if !strings.Contains(body, `custody_ledger_commit_seconds_bucket{le="+Inf"} `+strconv.Itoa(commits)) {
		t.Fatalf("no +Inf bucket of %d commits in /metrics:\n%.3000s", commits, body)
	}
}
