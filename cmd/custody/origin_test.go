package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCopiedReplicaConfigRefused: a second replica whose config was
// copied from the first (same ledger.origin, its own data dir and so its
// own key) refuses to start on the shared index while the first runs,
// and names the fix. Once the first is gone, its registration is stale
// and the second may take the origin over.
func TestCopiedReplicaConfigRefused(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dsn := postgresDSN(t)
	simURL := startSim(t, "--model", "sim-1")
	dir := t.TempDir()
	cfgA := filepath.Join(dir, "a.yaml")
	cfgB := filepath.Join(dir, "b.yaml")
	os.WriteFile(cfgA, []byte(replicaConfig("a", dsn, simURL)), 0o600)
	copied := strings.Replace(replicaConfig("a", dsn, simURL), "data_dir: ./data-a", "data_dir: ./data-b", 1)
	os.WriteFile(cfgB, []byte(copied), 0o600)
	a := startServe(t, dir, "--config", cfgA)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--listen", "127.0.0.1:0", "--config", cfgB)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("a copied replica config started (or did not exit 1): %v\n%s", err, out)
	}
	for _, want := range []string{`ledger.origin "replica-a.custody.test/log" is registered in the index by the replica at ` + a.URL,
		"running with another signing key", "Give this replica its own ledger.origin"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}

	a.stop()
	b := startServe(t, dir, "--config", cfgB)
	if !strings.Contains(b.stderr.String(), "taking it over") {
		t.Errorf("taking over a stale registration is not logged:\n%s", b.stderr)
	}
}
