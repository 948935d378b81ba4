package main

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/custody-gateway/custody/internal/refused"
)

// TestGracefulShutdown: on SIGTERM custody stops accepting, finishes the
// requests in flight, flushes the ledger and exits 0; what it answered is
// in the log after a restart.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: slow, kind: sim, sim: {token_delay: 40ms}}]
models: [{name: sim-1, context_window: 32768, routes: [{provider: slow}]}]
`)
	s := startServe(t, dir, "--config", cfg)
	req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(chatBody("sim-1", "a slow stream", true)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	id := resp.Header.Get("Custody-Request-Id")
	br := bufio.NewReader(resp.Body)
	if first, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(first, "data: ") {
		t.Fatalf("stream did not start: %q %v", first, err)
	}
	s.cmd.Process.Signal(syscall.SIGTERM) // the stream is under way
	rest, _ := io.ReadAll(br)
	if resp.StatusCode != 200 || !strings.HasSuffix(strings.TrimSpace(string(rest)), "data: [DONE]") {
		t.Fatalf("in-flight stream not finished on SIGTERM: %d %.300s", resp.StatusCode, rest)
	}
	select {
	case err := <-s.waitErr:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, s.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("custody did not exit after SIGTERM")
	}
	s2 := startServe(t, dir, "--config", cfg)
	if resp, body := get(t, s2.URL+"/v1/custody/records?request_id="+id, "adm-test"); !strings.Contains(body, id) {
		t.Fatalf("the finished request is not recorded: %d %s", resp.StatusCode, body)
	}
}

// TestShutdownWithoutQuorum: with the witness quorum out of reach, SIGINT
// still ends custody within its bound, exit 0, saying how many leaves wait
// for a checkpoint; they are durable, and the next start, here without
// witnesses, publishes them.
func TestShutdownWithoutQuorum(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	const origin = "quorum.custody.test/log"
	skey, _, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	_, wvkey, err := note.GenerateKey(rand.Reader, "gone.custody.test")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "signing.key")
	os.WriteFile(keyFile, []byte(skey+"\n"), 0o600)
	ledgerCfg := fmt.Sprintf("ledger:\n  origin: %s\n  key_file: %s\n  batch_max_age: 50ms\n", origin, keyFile)
	withWitness := ledgerCfg + fmt.Sprintf("  witness_policy: {quorum: 1, timeout: 1s}\n  witnesses:\n    - {name: gone.custody.test, vkey: %q, url: %q}\n",
		wvkey, "http://"+refused.Addr(t)+"/") // nothing answers there
	// The log is made without witnesses: on an empty log tessera's first
	// checkpoint needs the quorum, and start-up fails without it.
	startServe(t, dir, "--config", writeConfig(t, dir, twoTenants+ledgerCfg)).stop()
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants+withWitness))
	resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "waits for a quorum", false))
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("Custody-Request-Id")
	began := time.Now()
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.waitErr:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, s.stderr)
		}
	case <-time.After(25 * time.Second):
		t.Fatalf("custody did not stop without a witness quorum\n%s", s.stderr)
	}
	took := time.Since(began)
	if took > ledgerPublishWait+5*time.Second {
		t.Errorf("stopping took %v, bound %v", took, ledgerPublishWait)
	}
	if !strings.Contains(s.stderr.String(), "leaves are durable but not yet published") {
		t.Errorf("no word on the unpublished leaves:\n%s", s.stderr)
	}
	s2 := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants+ledgerCfg))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, st := get(t, s2.URL+"/v1/custody/log", "adm-test")
		if strings.Contains(st, `"unpublished":0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiting leaves were never published: %s", st)
		}
	}
	if resp, body := get(t, s2.URL+"/v1/custody/records?request_id="+id, "adm-test"); !strings.Contains(body, id) {
		t.Fatalf("the request is not recorded: %d %s", resp.StatusCode, body)
	}
}
