package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyRightAfterResponse: the receipt fetched right after a
// response has a valid signature but no inclusion yet, so `custody
// verify` exits 3 (not 1: nothing is wrong); with --wait it polls the log
// until the leaf is there and exits 0. batch_max_age is 1s here, its
// longest, so that "right after" is most often before integration; a
// busy machine may still lose that race, and the test then asks again.
func TestVerifyRightAfterResponse(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants+"ledger: {batch_max_age: 1s}\n"))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, vkey := get(t, s.URL+"/log/verifier", "")
	key := write("vkey", vkey)
	// "Right after" is a race with the batch's integration that a busy
	// machine can lose (verify started more than batch_max_age after the
	// response): a receipt already integrated verifies (exit 0), and the
	// test asks again with a new request, up to five times.
	var (
		id, reqBody, rf string
		args            []string
	)
	for attempt := 1; ; attempt++ {
		reqBody = fmt.Sprintf(`{"model":"sim-1","messages":[{"role":"user","content":"verify me now, attempt %d"}]}`, attempt)
		resp, respBody := post(t, s.URL+"/v1/chat/completions", "sk-acme", reqBody)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, respBody)
		}
		id = resp.Header.Get("Custody-Request-Id")
		r, receipt := get(t, s.URL+resp.Header.Get("Custody-Receipt"), "sk-acme")
		if r.StatusCode != 200 {
			t.Fatalf("receipt: %d %s", r.StatusCode, receipt)
		}
		var req, res string
		rf, req, res = write("receipt.json", receipt), write("req.json", reqBody), write("resp.json", respBody)
		args = []string{"verify", "--log", s.URL, "--key", key, "--request", req, "--response", res, rf}
		code, out, errOut := runCmd(t, dir, args...)
		if code == exitOK && attempt < 5 {
			t.Logf("attempt %d: the leaf was integrated before verify ran (a busy machine); asking again", attempt)
			continue
		}
		if code != exitPending || !strings.Contains(errOut, "signature is valid") || !strings.Contains(errOut, "--wait") {
			t.Fatalf("right after the response: exit %d, want 3\nstdout: %s\nstderr: %s", code, out, errOut)
		}
		break
	}
	// Without --log, a receipt without a proof is pending too.
	if code, _, errOut := runCmd(t, dir, "verify", "--key", key, rf); code != exitPending {
		t.Fatalf("no --log, no proof: exit %d, want 3: %s", code, errOut)
	}
	code, out, errOut := runCmd(t, dir, append([]string{"verify", "--wait", "10s"}, args[1:]...)...)
	if code != exitOK || !strings.HasPrefix(out, "valid: request "+id) {
		t.Fatalf("--wait 10s: exit %d, want 0\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	// A bad request still exits 1, waiting or not.
	bad := write("bad.json", strings.Replace(reqBody, "now", "later", 1))
	if code, _, errOut := runCmd(t, dir, "verify", "--wait", "2s", "--log", s.URL, "--key", key, "--request", bad, rf); code != exitFailed {
		t.Fatalf("wrong request bytes: exit %d, want 1: %s", code, errOut)
	}
	if code, _, _ := runCmd(t, dir, "verify", "--wait", "2s", "--key", key, rf); code != exitUsage {
		t.Fatalf("--wait without --log: exit %d, want 2", code)
	}
}
