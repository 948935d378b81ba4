package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPlaintextAtRest: after plain, streamed and rejected traffic, no
// byte of any prompt or response is anywhere under the data dir, nor in
// the gateway's logs.
func TestNoPlaintextAtRest(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants))
	const marker = "zebracorn-PLAINTEXT-7f3a"
	for i, tc := range []struct {
		path, body string
		answered   bool // 200, the marker in the answer
	}{
		{"/v1/chat/completions", chatBody("sim-1", "please repeat "+marker+" verbatim", false), true},
		{"/v1/chat/completions", chatBody("sim-1", "stream "+marker+" back to me", true), true},
		{"/v1/completions", `{"model":"sim-1","prompt":"complete ` + marker + `","max_tokens":8}`, true},
		{"/v1/chat/completions", chatBody("no-such-model", marker, false), false},
		// The Messages and Responses fronts, translated to the sim's chat.
		{"/v1/messages", `{"model":"sim-1","max_tokens":32,"messages":[{"role":"user","content":"please repeat ` + marker + ` verbatim"}]}`, true},
		{"/v1/messages", `{"model":"sim-1","max_tokens":32,"stream":true,"messages":[{"role":"user","content":"stream ` + marker + ` back"}]}`, true},
		{"/v1/responses", `{"model":"sim-1","store":false,"input":"please repeat ` + marker + ` verbatim"}`, true},
		{"/v1/responses", `{"model":"sim-1","store":false,"stream":true,"input":"stream ` + marker + ` back"}`, true},
		// Refused in translation: the error names the field, not its value.
		{"/v1/messages", `{"model":"sim-1","max_tokens":8,"messages":[{"role":"user","content":[{"type":"` + marker + `","text":"x"}]}]}`, false},
		{"/v1/responses", `{"model":"sim-1","previous_response_id":"resp_` + marker + `","input":"` + marker + `"}`, false},
	} {
		resp, out := post(t, s.URL+tc.path, "sk-acme", tc.body)
		if tc.answered && (resp.StatusCode != 200 || !strings.Contains(out, marker)) {
			t.Fatalf("request %d (%s): the answer should carry the marker: %d %.200s", i, tc.path, resp.StatusCode, out)
		}
		if !tc.answered && resp.StatusCode == 200 {
			t.Fatalf("request %d (%s): served, want a refusal: %.200s", i, tc.path, out)
		}
	}
	s.stop() // flush the ledger and the index
	filepath.WalkDir(filepath.Join(dir, "custody-data"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(marker)) {
			t.Errorf("plaintext in %s", p)
		}
		return nil
	})
	if strings.Contains(s.stderr.String(), marker) || strings.Contains(s.stdout.String(), marker) {
		t.Errorf("plaintext in the gateway's logs")
	}
}
