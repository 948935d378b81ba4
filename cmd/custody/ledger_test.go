package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const twoTenants = `
admin_keys: [adm-test]
tenants:
  - {id: acme, api_keys: [sk-acme]}
  - {id: beta, api_keys: [sk-beta]}
providers:
  - {name: sim, kind: sim, request_id_echo: x-request-id}
models:
  - name: sim-1
    context_window: 32768
    routes: [{provider: sim}]
`

// fetchReceipt polls until the receipt carries an inclusion proof.
func fetchReceipt(t *testing.T, s *server, key, id string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, body := get(t, s.URL+"/v1/custody/receipts/"+id, key)
		if resp.StatusCode != 200 {
			t.Fatalf("receipt: %d %s", resp.StatusCode, body)
		}
		var r struct {
			InclusionProof []string `json:"inclusion_proof"`
			Checkpoint     string   `json:"checkpoint"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		if r.Checkpoint != "" {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("receipt never integrated: %s", body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestReceiptsVerifyAgainstTheLog(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	reqBody := `{"model":"sim-1","messages":[{"role":"user","content":"receipt me k9XbQ2mZ7w"}]}`
	resp, respBody := post(t, s.URL+"/v1/chat/completions", "sk-acme", reqBody)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, respBody)
	}
	id := resp.Header.Get("Custody-Request-Id")
	if resp.Header.Get("Custody-Receipt") != "/v1/custody/receipts/"+id {
		t.Fatalf("Custody-Receipt %q", resp.Header.Get("Custody-Receipt"))
	}
	// Another tenant cannot read it, nor learn that it exists.
	if r, body := get(t, s.URL+"/v1/custody/receipts/"+id, "sk-beta"); r.StatusCode != 404 || !strings.Contains(body, "not_found") {
		t.Fatalf("beta read acme's receipt: %d %s", r.StatusCode, body)
	}
	receipt := write("receipt.json", fetchReceipt(t, s, "sk-acme", id))
	req, good, bad := write("req.json", reqBody), write("resp.json", respBody), write("bad.json", strings.Replace(respBody, "k9XbQ2mZ7w", "k9XbQ2mZ7x", 1))
	logURL := s.URL + "/log"
	if code, out, errOut := runCmd(t, dir, "verify", "--log", logURL, "--request", req, "--response", good, receipt); code != 0 {
		t.Fatalf("true receipt refused: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := runCmd(t, dir, "verify", "--log", logURL, "--request", req, "--response", bad, receipt); code != 1 {
		t.Fatalf("edited response accepted: %d %s", code, errOut)
	}
	if code, _, _ := runCmd(t, dir, "verify", "--log", logURL, "--request", bad, receipt); code != 1 {
		t.Fatalf("wrong request bytes accepted")
	}

	// A stream's receipt opens with the bytes before its receipt comment.
	streamReq := `{"model":"sim-1","stream":true,"messages":[{"role":"user","content":"stream receipt"}]}`
	resp, streamBody := post(t, s.URL+"/v1/chat/completions", "sk-acme", streamReq)
	sid := resp.Header.Get("Custody-Request-Id")
	if !strings.Contains(streamBody, ": custody-receipt "+sid) {
		t.Fatalf("no receipt comment: %s", streamBody)
	}
	sreceipt := write("sreceipt.json", fetchReceipt(t, s, "sk-acme", sid))
	if code, out, errOut := runCmd(t, dir, "verify", "--log", logURL, "--request", write("sreq.json", streamReq), "--response", write("sresp.sse", streamBody), sreceipt); code != 0 {
		t.Fatalf("stream receipt refused: %d %s %s", code, out, errOut)
	}

	// Rejections are recorded too.
	resp, _ = post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`)
	rid := resp.Header.Get("Custody-Request-Id")
	if resp.StatusCode != 400 || rid == "" {
		t.Fatalf("rejection: %d %v", resp.StatusCode, resp.Header)
	}
	fetchReceipt(t, s, "sk-acme", rid)

	state := filepath.Join(dir, "audit.state")
	if code, out, errOut := runCmd(t, dir, "audit", "--log", logURL, "--state", state); code != 0 {
		t.Fatalf("audit: %d %s %s", code, out, errOut)
	}
	// The log's files alone suffice: audit the directory too.
	if code, out, errOut := runCmd(t, dir, "audit", "--log", filepath.Join(dir, "custody-data", "ledger", "log"), "--state", state); code != 0 {
		t.Fatalf("audit of the directory: %d %s %s", code, out, errOut)
	}
}
