package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReloadOnSIGHUP: a valid file takes effect for new requests; a bad
// one keeps the old config and says why.
func TestReloadOnSIGHUP(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	path := writeConfig(t, dir, twoTenants)
	s := startServe(t, dir, "--config", path)
	ok := func(key string) int {
		resp, _ := post(t, s.URL+"/v1/chat/completions", key, chatBody("sim-1", "hello", false))
		return resp.StatusCode
	}
	if ok("sk-gamma") != 401 {
		t.Fatal("unknown tenant served before reload")
	}
	reloads := 0
	hup := func() {
		// Wait for the reload's verdict (accepted or refused) in the log.
		reloads++
		s.cmd.Process.Signal(syscall.SIGHUP)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Count(s.stderr.String(), `"msg":"config reload`) >= reloads {
				return
			}
		}
		t.Fatalf("no word of reload %d:\n%s", reloads, s.stderr)
	}

	// A bad file: the old config stays, the log says why.
	os.WriteFile(path, []byte(twoTenants+"\nbogus_key: 1\n"), 0o600)
	hup()
	if ok("sk-acme") != 200 {
		t.Fatal("a bad reload broke the running config")
	}
	if !strings.Contains(s.stderr.String(), "config reload refused") || !strings.Contains(s.stderr.String(), "bogus_key: unknown key") {
		t.Fatalf("no reason given for the refused reload:\n%s", s.stderr)
	}

	// A good file: the new tenant works, a removed one does not.
	good := strings.Replace(twoTenants, "{id: beta, api_keys: [sk-beta]}", "{id: gamma, api_keys: [sk-gamma]}", 1)
	os.WriteFile(path, []byte(good), 0o600)
	hup()
	if ok("sk-gamma") != 200 || ok("sk-beta") != 401 || ok("sk-acme") != 200 {
		t.Fatalf("reload did not take effect:\n%s", s.stderr)
	}

	// What cannot change while running is refused.
	os.WriteFile(path, []byte(good+"\ndata_dir: ./elsewhere\n"), 0o600)
	hup()
	if !strings.Contains(s.stderr.String(), "data_dir cannot change while running") || ok("sk-gamma") != 200 {
		t.Fatalf("a data_dir change was not refused:\n%s", s.stderr)
	}
}
