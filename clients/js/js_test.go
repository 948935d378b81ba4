// Package js_test runs the npm package's tests (node --test) from `go
// test ./...`: the shared test vectors, and the OpenAI Node SDK with the
// fetch wrapper against a real `custody serve`.
package js_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// node returns the node binary, or skips (fails under CI, where .ci/run
// installs it).
func node(t *testing.T) string {
	p, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	return p
}

func runNode(t *testing.T, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if !regexp.MustCompile(`(?m)^# fail 0$`).Match(out) || regexp.MustCompile(`(?m)^# pass 0$`).Match(out) {
		t.Fatalf("node %s:\n%s", strings.Join(args, " "), out)
	}
	t.Logf("node %s:\n%s", strings.Join(args, " "), lastLines(out, 9))
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestVectors: the npm package judges every shared vector as the Go
// verifier does (verify.TestVectors checks the Go side).
func TestVectors(t *testing.T) {
	runNode(t, nil, "--test", "test/vectors.test.js")
}

// TestOpenAINodeSDK installs the pinned openai package (devDependencies)
// if needed, starts the real binary with the simulator, and runs
// test/sdk.test.js against it.
func TestOpenAINodeSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds custody and installs the openai npm package; skipped with -short")
	}
	node(t)
	if _, err := os.Stat("node_modules/openai/package.json"); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("npm is not installed")
		}
		cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install: %v\n%s", err, out)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "custody")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/custody").CombinedOutput(); err != nil {
		t.Fatalf("building custody: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "custody.yaml")
	os.WriteFile(cfg, []byte(`
data_dir: `+filepath.Join(dir, "data")+`
tenants:
  - {id: acme, api_keys: [sk-node]}
providers:
  - {name: sim, kind: sim}
models:
  - name: sim-1
    context_window: 32768
    routes: [{provider: sim}]
`), 0o600)
	srv := exec.Command(bin, "serve", "--config", cfg, "--listen", "127.0.0.1:0")
	stdout, _ := srv.StdoutPipe()
	var logs strings.Builder
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`listening\s+(http://[0-9.:]+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-url:
	case <-time.After(60 * time.Second):
		t.Fatal("custody serve did not start")
	}
	vkey, err := os.ReadFile(filepath.Join(dir, "data", "ledger", "log", "verifier"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("custody serve's log:\n%s", logs.String())
		}
	}()
	runNode(t, []string{"CUSTODY_URL=" + base, "CUSTODY_KEY=sk-node", "CUSTODY_VKEY=" + strings.TrimSpace(string(vkey))}, "--test", "test/sdk.test.js")
}
