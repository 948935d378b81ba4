package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/ledger"
)

func TestAuditCommand(t *testing.T) {
	t.Parallel() // its own data dir and ports
	f := newLogFixture(t)
	state := filepath.Join(t.TempDir(), "state.json")
	audit := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"audit"}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := audit("--log", f.dir, "--key", f.key, "--state", state); code != 0 || !strings.Contains(out, "clean") {
		t.Fatalf("first audit: %d %s", code, out)
	}
	if code, out := audit("--log", f.dir, "--key", f.key, "--state", state); code != 0 {
		t.Fatalf("second audit: %d %s", code, out)
	}
	// Another log under the same origin but another key.
	other := t.TempDir()
	ol, err := ledger.Open(context.Background(), ledger.Config{Dir: other, CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ol.Append(context.Background(), &custody.Transaction{ID: "x"})
	ol.Close(context.Background())
	if code, _ := audit("--log", other, "--key", f.key); code != 1 {
		t.Fatalf("audit of a log signed by another key: %d", code)
	}
	if code, _ := audit("--log", other, "--state", state); code != 1 {
		t.Fatalf("audit with a changed key against the state: %d", code)
	}
	cp := filepath.Join(f.dir, "log", "checkpoint")
	b, _ := os.ReadFile(cp)
	// Flip a bit of the tree size (line 2). Not of the signature: its last
	// base64 character also holds padding bits that decoding ignores, so a
	// flip there can leave the signature as it was (a flaky test).
	b[bytes.IndexByte(b, '\n')+1] ^= 1
	os.WriteFile(cp, b, 0o644)
	if code, _ := audit("--log", f.dir, "--key", f.key); code != 1 {
		t.Fatalf("audit of a tampered checkpoint: %d", code)
	}
	for _, args := range [][]string{{}, {"--key", f.key}, {"--log", f.dir, "extra"}, {"--log", f.dir, "--key", "nonsense"},
		{"--log", f.dir, "--nope"}, {"--config", "x.yaml", "--log", f.dir}, {"--log", f.dir, "--state-dir", t.TempDir()}} {
		if code, _ := audit(args...); code != 2 {
			t.Fatalf("audit %q: exit %d, want 2", args, code)
		}
	}
}
