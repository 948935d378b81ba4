package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/transparency-dev/tessera/api/layout"
)

// TestServeRefusesARewrittenTree: with custody stopped, a transaction
// leaf and its level-0 tile are rewritten on disk so that the stored tree
// holds together (an audit finds only the signed root different). serve
// must not start over it: it exits non-zero, says what it found and what
// to run, and signs no new checkpoint.
func TestServeRefusesARewrittenTree(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	cfg := writeConfig(t, dir, twoTenants)
	s := startServe(t, dir, "--config", cfg)
	for _, p := range []string{"one", "two", "three", "four"} {
		if resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"sim-1","messages":[{"role":"user","content":"`+p+`"}]}`); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	s.stop()

	logDir := filepath.Join(dir, "custody-data", "ledger", "log")
	// Leaf 0 is the config leaf of the start; 1-4 the transactions.
	if _, err := ledgertest.RewriteLeaf(logDir, 2, true); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, dir, "audit", "--log", logDir)
	if code != 1 || !strings.Contains(out+errOut, "the leaves hash to") {
		t.Fatalf("the rewrite should hold together but for the signed root; audit: %d %s %s", code, out, errOut)
	}
	cpPath := filepath.Join(logDir, layout.CheckpointPath)
	cp := mustReadFile(t, cpPath)
	fi, err := os.Stat(cpPath)
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := serveUntilExitOrBanner(t, dir, "--config", cfg)
	if code == 0 {
		t.Fatalf("custody serve started over a rewritten tree\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	for _, want := range []string{
		"is not the one this ledger signed",
		"the signed checkpoint says",
		"custody audit --log custody-data/ledger/log",
		"backup",
		"witness",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve's refusal does not say %q:\n%s", want, stderr)
		}
	}
	after := mustReadFile(t, cpPath)
	fi2, err := os.Stat(cpPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, cp) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("the refused start wrote a checkpoint:\n%s\nwas\n%s", after, cp)
	}
	// What the advice says to run still says the log is tampered.
	if code, out, errOut := runCmd(t, dir, "audit", "--log", logDir); code != 1 {
		t.Errorf("audit after the refused start: %d %s %s", code, out, errOut)
	}
}

// serveUntilExitOrBanner runs `custody serve` in dir expecting it to
// exit before it listens: it returns the exit code and output, or -1 (after
// stopping it) if it printed its listening banner instead.
func serveUntilExitOrBanner(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr lockedBuffer
	cmd := exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case err := <-done:
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return code, stdout.String(), stderr.String()
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatalf("custody serve neither listened nor exited\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		case <-time.After(20 * time.Millisecond):
			if listening.MatchString(stdout.String()) {
				cmd.Process.Signal(os.Interrupt)
				<-done
				return 0, stdout.String(), stderr.String()
			}
		}
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
