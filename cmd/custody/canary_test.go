package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func canaryConfig(fault, probes string) string {
	sim := ""
	if fault != "" {
		sim = ", sim: {faults: [" + fault + "]}"
	}
	return `
tenants: [{id: acme, api_keys: [sk-acme]}]
canaries: {probes: [` + probes + `]}
providers:
  - {name: up, kind: sim, request_id_echo: x-request-id` + sim + `}
models:
  - {name: sim-1, context_window: 8192, routes: [{provider: up}]}
`
}

// TestCanaryCommand: the honest upstream passes every probe; a model that
// lies about its name after enrollment is caught by identity; an upstream
// that answers an oversize prompt with 200 is caught by oversize.
func TestCanaryCommand(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	honest := writeConfig(t, dir, canaryConfig("", "echo, needle, secret, identity, oversize"))
	code, out, errOut := runCmd(t, dir, "canary", "--config", honest)
	if code != 0 {
		t.Fatalf("honest upstream failed its canaries: %d\n%s\n%s", code, out, errOut)
	}
	for _, probe := range []string{"echo", "needle", "secret", "identity", "oversize"} {
		if !strings.Contains(out, probe) {
			t.Errorf("table lacks probe %s:\n%s", probe, out)
		}
	}
	for _, tc := range []struct{ fault, probes, failing string }{
		{"model-lie", "identity", "identity"},
		{"snapshot-drift", "identity", "identity"},
		{"oversize-200", "oversize", "oversize"},
		{"placeholder-substitution", "needle", "needle"},
		{"stale-kv", "secret, echo", "echo"}, // echo's answer carries the secret planted just before
	} {
		t.Run(tc.fault, func(t *testing.T) {
			code, out, errOut := runCmd(t, dir, "canary", "--config", writeConfig(t, dir, canaryConfig(tc.fault, tc.probes)))
			if code != 1 {
				t.Fatalf("%s not caught (exit %d):\n%s\n%s", tc.fault, code, out, errOut)
			}
			failed := false
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) >= 3 && f[1] == tc.failing && f[2] == "FAIL" {
					failed = true
				}
			}
			if !failed {
				t.Errorf("the table does not show %s failing:\n%s", tc.failing, out)
			}
		})
	}
	if code, _, errOut := runCmd(t, dir, "canary", "--config", honest, "--route", "nope/none"); code != 2 || !strings.Contains(errOut, "sim-1/up") {
		t.Errorf("unknown route: %d %s", code, errOut)
	}
}

// TestReenrollIsAnAdminActInTheLedger: re-enrollment is an explicit admin
// action, recorded as a leaf and a canary event.
func TestReenrollIsAnAdminActInTheLedger(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, `
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme]}]
canaries: {probes: [identity]}
providers: [{name: up, kind: sim}]
models: [{name: sim-1, context_window: 8192, routes: [{provider: up}]}]
`))
	if r, _ := post(t, s.URL+"/v1/custody/canaries/reenroll", "sk-acme", `{"route":"sim-1/up"}`); r.StatusCode != 403 {
		t.Fatalf("a tenant re-enrolled: %d", r.StatusCode)
	}
	resp, body := post(t, s.URL+"/v1/custody/canaries/reenroll", "adm-test", `{"route":"sim-1/up"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, "request_id") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var out struct {
		RequestID string `json:"request_id"`
	}
	json.Unmarshal([]byte(body), &out)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, recs := get(t, s.URL+"/v1/custody/records?request_id="+out.RequestID, "adm-test")
		_, evs := get(t, s.URL+"/v1/custody/events?type=canary", "adm-test")
		if strings.Contains(recs, "custody.canary.reenroll") && strings.Contains(evs, "reenrolled") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("re-enrollment not recorded:\n%s\n%s", recs, evs)
		}
	}
	if r, b := get(t, s.URL+"/v1/custody/canaries", "adm-test"); r.StatusCode != 200 || !strings.Contains(b, "sim-1/up") {
		t.Fatalf("canary status: %d %s", r.StatusCode, b)
	}
}
