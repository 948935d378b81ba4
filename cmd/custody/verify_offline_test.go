package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// vector is the part of a testdata/receipts file the binary needs (the
// format is verify.Vector's; verify's own test judges them in process).
type vector struct {
	Kind          string          `json:"kind"`
	Input         json.RawMessage `json:"input"`
	LogKey        string          `json:"log_key"`
	WitnessKeys   []string        `json:"witness_keys"`
	WitnessQuorum int             `json:"witness_quorum"`
	Request       []byte          `json:"request"`
	Response      []byte          `json:"response"`
	Want          string          `json:"want"`
}

// TestVerifyOfflineVectors runs `custody verify --offline` on every
// shared test vector: each valid one exits 0, each forgery 1, a receipt
// without proof 3.
func TestVerifyOfflineVectors(t *testing.T) {
	t.Parallel() // its own data dir and ports
	files, err := filepath.Glob("../../testdata/receipts/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("vectors: %d, %v", len(files), err)
	}
	want := map[string]int{"valid": exitOK, "invalid": exitFailed, "not_integrated": exitPending}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			b, _ := os.ReadFile(f)
			var v vector
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			write := func(name string, data []byte) string {
				p := filepath.Join(dir, name)
				os.WriteFile(p, data, 0o600)
				return p
			}
			args := []string{"verify", "--offline", "--key", v.LogKey}
			if v.WitnessQuorum > 0 {
				for _, k := range v.WitnessKeys {
					args = append(args, "--witness-key", k)
				}
				args = append(args, "--witness-quorum", strconv.Itoa(v.WitnessQuorum))
			}
			if v.Request != nil {
				args = append(args, "--request", write("request", v.Request))
			}
			if v.Response != nil {
				args = append(args, "--response", write("response", v.Response))
			}
			args = append(args, write("input.json", v.Input))
			code, out, errOut := runCmd(t, dir, args...)
			if code != want[v.Want] {
				t.Fatalf("exit %d, want %d (%s)\nstdout: %s\nstderr: %s", code, want[v.Want], v.Want, out, errOut)
			}
			if code == exitFailed && errOut == "" {
				t.Fatal("no reason on stderr")
			}
		})
	}
}

var offlineTook = regexp.MustCompile(`offline, ([0-9.]+(µs|ms|s))\)`)

// TestExportThenVerifyOffline: a receipt from the real gateway, exported
// as a bundle with --export while the gateway runs, verifies with
// --offline after the gateway is gone (no network), says how long it took
// in process, and fails with the wrong bytes. (What it costs is measured
// by verify's BenchmarkVerifyReceiptOffline: a loaded machine's wall
// clock holds no duration.)
func TestExportThenVerifyOffline(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants))
	reqBody := `{"model":"sim-1","messages":[{"role":"user","content":"bundle me"}]}`
	resp, respBody := post(t, s.URL+"/v1/chat/completions", "sk-acme", reqBody)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, respBody)
	}
	_, receipt := get(t, s.URL+resp.Header.Get("Custody-Receipt"), "sk-acme")
	_, vkey := get(t, s.URL+"/log/verifier", "")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	rf, req, res, key := write("receipt.json", receipt), write("req.json", reqBody), write("resp.json", respBody), write("vkey", vkey)
	bundle := filepath.Join(dir, "bundle.json")
	if code, out, errOut := runCmd(t, dir, "verify", "--log", s.URL, "--key", key, "--wait", "5s", "--export", bundle, rf); code != exitOK {
		t.Fatalf("export: exit %d\n%s%s", code, out, errOut)
	}
	s.stop()
	b, err := os.ReadFile(bundle)
	if err != nil || !strings.Contains(string(b), `"proof": "c2sp.org/tlog-proof@v1\nindex `) {
		t.Fatalf("bundle %s: %v", b, err)
	}
	start := time.Now()
	code, out, errOut := runCmd(t, dir, "verify", "--offline", "--key", key, "--request", req, "--response", res, bundle)
	wall := time.Since(start)
	if code != exitOK {
		t.Fatalf("offline: exit %d\n%s%s", code, out, errOut)
	}
	m := offlineTook.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no timing in %q", out)
	}
	took, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatalf("offline verification took %q: %v", m[1], err)
	}
	t.Logf("offline verification: %s in process, %s wall time for the whole command", took, wall.Round(time.Millisecond))
	if code, _, _ := runCmd(t, dir, "verify", "--offline", "--key", key, "--request", res, bundle); code != exitFailed {
		t.Fatalf("wrong request bytes: exit %d, want 1", code)
	}
	if code, _, _ := runCmd(t, dir, "verify", "--offline", bundle); code != exitUsage {
		t.Fatalf("--offline without --key: exit %d, want 2", code)
	}
}
