package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The official TypeScript SDKs, from npm, at these versions.
const (
	anthropicNodeSDK = "@anthropic-ai/sdk@1.10.0"
	openaiNodeSDK    = "openai@7.55.0"
)

// nodeSDKs returns a node_modules holding both SDKs, installed once with
// npm into the user cache (custody-npm/node-sdks-...); without node and
// npm the test is skipped (CI installs them: .ci/run).
func nodeSDKs(t *testing.T) string {
	t.Helper()
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		if os.Getenv("CUSTODY_REQUIRE_FIXTURES") != "" {
			t.Fatal("node and npm are required (CUSTODY_REQUIRE_FIXTURES)")
		}
		t.Skip("node and npm are not installed")
	}
	_ = node
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	// The tests that use the SDKs run in parallel: one installs them.
	nodeSDKsMu.Lock()
	defer nodeSDKsMu.Unlock()
	name := strings.NewReplacer("@", "", "/", "-").Replace("node-sdks-" + anthropicNodeSDK + "-" + openaiNodeSDK)
	dir := filepath.Join(cache, "custody-npm", name)
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".custody-complete")); err == nil {
		return modules
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(npm, "install", "--silent", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, anthropicNodeSDK, openaiNodeSDK)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(modules, ".custody-complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return modules
}

var nodeSDKsMu sync.Mutex

// runNode runs one of testdata/sdk's scripts against custody at url.
func runNode(t *testing.T, script, url string, models ...string) {
	t.Helper()
	modules := nodeSDKs(t)
	path, _ := filepath.Abs(filepath.Join("testdata", "sdk", script))
	cmd := exec.Command("node", path)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "BASE_URL="+url, "MODELS="+strings.Join(models, ","))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
}

// TestMessagesNodeSDK: @anthropic-ai/sdk, unchanged, through the real
// binary, translated and passed through: create, stream, a tool call and
// its tool_result, count_tokens, an error.
func TestMessagesNodeSDK(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := dialectServe(t)
	runNode(t, "messages.cjs", s.URL, "translated", "messages")
}

// TestResponsesNodeSDK: the openai package's responses.create, unchanged,
// through the real binary, translated and passed through: plain,
// streamed, a function call and its output, a refused
// previous_response_id.
func TestResponsesNodeSDK(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := dialectServe(t)
	runNode(t, "responses.cjs", s.URL, "translated", "responses")
}
