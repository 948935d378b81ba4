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
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants))
	const marker = "zebracorn-PLAINTEXT-7f3a"
	for i, body := range []string{
		chatBody("sim-1", "please repeat "+marker+" verbatim", false),
		chatBody("sim-1", "stream "+marker+" back to me", true),
		`{"model":"sim-1","prompt":"complete ` + marker + `","max_tokens":8}`,
		chatBody("no-such-model", marker, false),
	} {
		path := "/v1/chat/completions"
		if i == 2 {
			path = "/v1/completions"
		}
		resp, out := post(t, s.URL+path, "sk-acme", body)
		if i < 3 && (resp.StatusCode != 200 || !strings.Contains(out, marker)) {
			t.Fatalf("request %d: the answer should carry the marker: %d %.200s", i, resp.StatusCode, out)
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
