package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/index/postgres/pgtest"
)

// postgresDSN returns a DSN on a fresh schema, dropped at cleanup, or
// skips when PostgreSQL is unreachable (unless CI requires it).
func postgresDSN(t *testing.T) string { return pgtest.Schema(t) }

var simListening = regexp.MustCompile(`on (http://[0-9.:]+/v1)`)

// startSim runs `custody sim` with args and returns its base URL.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(binary, append([]string{"sim", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := simListening.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("custody sim did not start: %s", out)
	return ""
}

func replicaConfig(name, dsn, simURL string) string {
	return fmt.Sprintf(`
data_dir: ./data-%[1]s
admin_keys: [adm-test]
index: {backend: postgres, dsn: %[2]q}
ledger: {origin: "replica-%[1]s.custody.test/log"}
tenants:
  - {id: acme, api_keys: [sk-acme]}
  - {id: beta, api_keys: [sk-beta]}
providers:
  - {name: up, kind: openai, base_url: %[3]q, request_id_echo: x-request-id}
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: up}]}
`, name, dsn, simURL)
}

// TestReplicasShareOnePostgres runs two replicas of the real binary on
// one PostgreSQL index: a receipt recorded by one is served by the other,
// a response delivered through one is refused as a replay through the
// other, and killing one under load loses no acknowledged transaction.
func TestReplicasShareOnePostgres(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dsn := postgresDSN(t)
	simURL := startSim(t, "--fault", "duplicate-id", "--model", "sim-1")
	dir := t.TempDir()
	cfgA := filepath.Join(dir, "a.yaml")
	cfgB := filepath.Join(dir, "b.yaml")
	os.WriteFile(cfgA, []byte(replicaConfig("a", dsn, simURL)), 0o600)
	os.WriteFile(cfgB, []byte(replicaConfig("b", dsn, simURL)), 0o600)
	a := startServe(t, dir, "--config", cfgA)
	b := startServe(t, dir, "--config", cfgB)

	// The duplicate-id fault gives the second response the first one's id.
	resp, body := post(t, a.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "first, through replica a", false))
	if resp.StatusCode != 200 {
		t.Fatalf("replica a: %d %s", resp.StatusCode, body)
	}
	idA := resp.Header.Get("Custody-Request-Id")
	resp, body = post(t, b.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "second, through replica b", false))
	if got := outcome(resp.StatusCode, body); got != "response_replayed" {
		t.Fatalf("replay across replicas not caught: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(body, idA) {
		t.Fatalf("the refusal names the other request: %s", body)
	}

	// A receipt recorded by a, fetched from b, verifies against a's log.
	rcpt := fetchReceipt(t, b, "sk-acme", idA)
	if !strings.Contains(rcpt, "replica-a.custody.test/log") {
		t.Fatalf("receipt does not name its shard: %s", rcpt)
	}
	p := filepath.Join(dir, "r.json")
	os.WriteFile(p, []byte(rcpt), 0o600)
	if code, out, errOut := runCmd(t, dir, "verify", "--log", a.URL+"/log", p); code != 0 {
		t.Fatalf("cross-replica receipt refused: %s %s", out, errOut)
	}
	if r, _ := get(t, b.URL+"/v1/custody/receipts/"+idA, "sk-beta"); r.StatusCode != 404 {
		t.Fatalf("another tenant read the receipt through replica b: %d", r.StatusCode)
	}

	// One audit covers every shard the shared index lists.
	if code, out, errOut := runCmd(t, dir, "audit", "--config", cfgB, "--state-dir", filepath.Join(dir, "states")); code != 0 ||
		!strings.Contains(out, "replica-a.custody.test/log") || !strings.Contains(out, "replica-b.custody.test/log") {
		t.Fatalf("audit of every shard: %d\n%s\n%s", code, out, errOut)
	}

	if testing.Short() {
		return
	}
	// Kill a under load on both; every acknowledged transaction survives.
	l := load([]*server{a, b}, 8, false)
	l.until(300, 20*time.Second)
	a.kill()
	time.Sleep(500 * time.Millisecond) // b serves on
	acked := l.stop()
	a = startServe(t, dir, "--config", cfgA)
	for _, id := range acked {
		r, body := get(t, b.URL+"/v1/custody/records?request_id="+id, "adm-test")
		if r.StatusCode != 200 || !strings.Contains(body, id) {
			t.Fatalf("acknowledged %s lost after killing a replica: %s", id, body)
		}
	}
	t.Logf("%d acknowledged transactions (served or rejected) all indexed after the kill", len(acked))
}
