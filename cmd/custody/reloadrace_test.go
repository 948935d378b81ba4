package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// reloadConfig has a route that canaries quarantine (its simulator
// substitutes placeholders) beside the route the traffic uses.
const reloadConfig = `
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme]}]
canaries: {interval: 300ms, probes: [needle]}
providers:
  - {name: good, kind: sim, request_id_echo: x-request-id}
  - {name: bad, kind: sim, sim: {faults: [placeholder-substitution]}}
models:
  - {name: sim-1, context_window: 8192, routes: [{provider: good}]}
  - {name: sim-2, context_window: 8192, routes: [{provider: bad}, {provider: good}]}
`

// TestReloadUnderTraffic: 5 reloads (SIGHUP) while 4 loops send requests.
// Every request is answered; the counters go on across the reloads (one
// registry for the process); a quarantined route stays quarantined. Run
// with GOFLAGS=-race, the binary is built with the race detector and the
// test fails on any race it reports (server.stop).
func TestReloadUnderTraffic(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	path := writeConfig(t, dir, reloadConfig)
	s := startServe(t, dir, "--config", path)
	quarantined := func() bool {
		_, body := get(t, s.URL+"/v1/custody/canaries", "adm-test")
		var st struct {
			Data []struct {
				Route       string
				Quarantined bool
			}
		}
		json.Unmarshal([]byte(body), &st)
		for _, r := range st.Data {
			if r.Route == "sim-2/bad" {
				return r.Quarantined
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); !quarantined(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the bad route was never quarantined:\n%s", s.stderr)
		}
	}

	var sent, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", fmt.Sprintf("loop %d request %d", i, n), n%2 == 1))
				sent.Add(1)
				if resp.StatusCode != 200 {
					failed.Add(1)
					t.Errorf("loop %d: %d %s", i, resp.StatusCode, body)
				}
			}
		})
	}
	for reload := 1; reload <= 5; reload++ {
		time.Sleep(100 * time.Millisecond)
		s.cmd.Process.Signal(syscall.SIGHUP)
		for deadline := time.Now().Add(20 * time.Second); strings.Count(s.stderr.String(), `"msg":"config reloaded"`) < reload; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("reload %d not done:\n%s", reload, s.stderr)
			}
		}
		if !quarantined() {
			t.Errorf("reload %d forgot the quarantine", reload)
		}
	}
	close(stop)
	wg.Wait()
	if sent.Load() < 20 || failed.Load() > 0 {
		t.Fatalf("%d requests, %d failed", sent.Load(), failed.Load())
	}
	_, metrics := get(t, s.URL+"/metrics", "")
	got := sumMetric(metrics, `custody_requests_total{model="sim-1"`)
	// The canaries' transactions count too: every one is logged before
	// it is counted, so the log bounds the counter from above, once the
	// log's buffer is written (at least every logFlushInterval).
	logged := 0
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		logged = 0
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(line, `"msg":"transaction"`) && strings.Contains(line, `"model":"sim-1"`) {
				logged++
			}
		}
		if float64(logged) >= got || time.Now().After(deadline) {
			break
		}
	}
	if got < float64(sent.Load()) || got > float64(logged) {
		t.Errorf("custody_requests_total for sim-1 = %v after 5 reloads, want the %d requests sent (%d transactions logged)", got, sent.Load(), logged)
	}
	if leaves := sumMetric(metrics, "custody_ledger_leaves_total"); leaves < float64(sent.Load()) {
		t.Errorf("custody_ledger_leaves_total = %v, want at least %d", leaves, sent.Load())
	}
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(line, `"msg":"canary"`) && (strings.Contains(line, "client_closed") || strings.Contains(line, "context canceled")) {
			t.Errorf("a cancelled canary was reported as the route's failure: %s", line)
		}
	}
}

// sumMetric adds up the samples of the exposition whose line starts with
// prefix.
func sumMetric(exposition, prefix string) float64 {
	var sum float64
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := sample.FindStringSubmatch(line)
		if f == nil {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		sum += v
	}
	return sum
}

// metricReaches scrapes /metrics until the samples under prefix add up
// to at least want, and returns the last scrape and whether they did: a
// transaction is counted as its handler returns, which may be a moment
// after its client has read the whole answer.
func metricReaches(t *testing.T, s *server, prefix string, want float64) (string, bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, metrics := get(t, s.URL+"/metrics", "")
		if sumMetric(metrics, prefix) >= want {
			return metrics, true
		}
		if time.Now().After(deadline) {
			return metrics, false
		}
	}
}

var sample = regexp.MustCompile(`\s([0-9.e+-]+)$`)
