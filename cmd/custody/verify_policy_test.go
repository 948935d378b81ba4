package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const policyConfig = `
admin_keys: [adm-test]
tenants:
  - {id: acme, api_keys: [sk-acme], policy: house}
providers:
  - {name: sim, kind: sim}
models:
  - name: sim-1
    context_window: 32768
    routes: [{provider: sim}]
policies:
  - {name: house, fallback: allow}
`

// TestConfigLeavesNameTheRules: start and every reload append a config
// leaf; a transaction after a reload that changed the policy names the
// new leaf, `custody verify` prints that policy as it was then, and
// `custody audit` checks the chain.
func TestConfigLeavesNameTheRules(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	path := writeConfig(t, dir, policyConfig)
	s := startServe(t, dir, "--config", path)
	_, vkey := get(t, s.URL+"/log/verifier", "")
	keyFile := filepath.Join(dir, "vkey")
	os.WriteFile(keyFile, []byte(vkey), 0o600)

	receiptOf := func(content string) (string, map[string]any) {
		t.Helper()
		resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"sim-1","messages":[{"role":"user","content":"`+content+`"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		_, rc := get(t, s.URL+resp.Header.Get("Custody-Receipt"), "sk-acme")
		p := filepath.Join(dir, content+".json")
		os.WriteFile(p, []byte(rc), 0o600)
		var r struct{ Leaf []byte }
		json.Unmarshal([]byte(rc), &r)
		var leaf map[string]any
		if err := json.Unmarshal(r.Leaf, &leaf); err != nil {
			t.Fatalf("leaf: %v %s", err, rc)
		}
		return p, leaf
	}
	before, leaf1 := receiptOf("before")
	if leaf1["v"] != 2.0 || leaf1["config_leaf"] == nil {
		t.Fatalf("the first transaction names no config leaf: %v", leaf1)
	}
	code, out, errOut := runCmd(t, dir, "verify", "--log", s.URL, "--key", keyFile, "--wait", "3s", before)
	if code != 0 || !strings.Contains(out, "policy: house, under config leaf ") || !strings.Contains(out, `"fallback":"allow"`) || !strings.Contains(out, "(start at ") {
		t.Fatalf("verify before the reload: %d\n%s%s", code, out, errOut)
	}

	os.WriteFile(path, []byte(strings.Replace(policyConfig, "{name: house, fallback: allow}", "{name: house, fallback: deny, require_pinned: true}", 1)), 0o600)
	s.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(s.stderr.String(), `"msg":"config reloaded`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reload:\n%s", s.stderr)
		}
	}
	after, leaf2 := receiptOf("after")
	if leaf2["config_leaf"] == leaf1["config_leaf"] || leaf2["config_leaf"].(float64) < leaf1["config_leaf"].(float64) {
		t.Fatalf("after the reload the transaction names config leaf %v, before %v", leaf2["config_leaf"], leaf1["config_leaf"])
	}
	code, out, errOut = runCmd(t, dir, "verify", "--log", s.URL, "--key", keyFile, "--wait", "3s", after)
	if code != 0 || !strings.Contains(out, "(reload at ") || !strings.Contains(out, `"fallback":"deny"`) || !strings.Contains(out, `"require_pinned":true`) {
		t.Fatalf("verify after the reload: %d\n%s%s", code, out, errOut)
	}
	// The first receipt still shows the rules it was decided under.
	if _, out, _ := runCmd(t, dir, "verify", "--log", s.URL, "--key", keyFile, before); !strings.Contains(out, `"fallback":"allow"`) {
		t.Fatalf("the old receipt's policy changed: %s", out)
	}
	code, out, errOut = runCmd(t, dir, "audit", "--log", s.URL, "--key", keyFile)
	if code != 0 || !strings.Contains(out, "config leaves: 2, chained") {
		t.Fatalf("audit: %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := runCmd(t, dir, "verify", "--log", s.URL, "--key", keyFile, "--export", filepath.Join(dir, "b.json"), after); !strings.Contains(out, "valid") {
		t.Fatal(out)
	}
	// Offline, the bundle carries its rules, proven under its checkpoint.
	if _, out, _ := runCmd(t, dir, "verify", "--offline", "--key", keyFile, filepath.Join(dir, "b.json")); !strings.Contains(out, "policy: house, under config leaf") || !strings.Contains(out, `"fallback":"deny"`) {
		t.Fatalf("offline: %s", out)
	}
}
