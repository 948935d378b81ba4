package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/ledger/ledgertest"
)

// TestServeCutsATornJournalTail: a record a crash left half written at
// the end of the journal is cut off, logged at WARN with the segment and
// offset, and serve starts. (testdata/script/ledger.txtar holds the
// corrupt case: serve refuses to start.)
func TestServeCutsATornJournalTail(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	ctx := context.Background()
	l, err := ledgertest.Open(ctx, filepath.Join(dir, "custody-data", "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledgertest.Append(ctx, l, 10); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, "custody-data", "ledger", "journal", "0000000000000000.wal")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	used := len(data)
	for used > 0 && data[used-1] == 0 {
		used--
	}
	// A header promising a 300-byte leaf of which 2 bytes reached the disk.
	copy(data[used:], []byte{0, 0, 1, 44, 7, 7, 7, 7, 0, 0, 0, 0, 0, 0, 0, 10, '{', '"'})
	if err := os.WriteFile(seg, data, 0o600); err != nil {
		t.Fatal(err)
	}

	s := startServe(t, dir, "--config", writeConfig(t, dir, "ledger: {origin: "+ledgertest.Origin+"}\n"+twoTenants))
	log := s.stderr.String()
	if !strings.Contains(log, `"level":"WARN"`) || !strings.Contains(log, `"segment":"custody-data/ledger/journal/0000000000000000.wal"`) ||
		!strings.Contains(log, `"offset":`+strconv.Itoa(used)) {
		t.Errorf("torn tail not logged at WARN with segment and offset %d:\n%s", used, log)
	}
	if fi, err := os.Stat(seg); err != nil || fi.Size() != int64(used) {
		t.Errorf("segment not cut at %d: %v", used, err)
	}
	if resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"sim-1","messages":[{"role":"user","content":"after the cut"}]}`); resp.StatusCode != 200 {
		t.Fatalf("after the cut: %d %s", resp.StatusCode, body)
	}
}

// TestServeSegmentBytes: ledger.segment_bytes sizes the journal's
// preallocated segments, so that a small data dir can hold them.
func TestServeSegmentBytes(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, "ledger: {segment_bytes: 1048576}\n"+twoTenants))
	if resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"sim-1","messages":[{"role":"user","content":"small disk"}]}`); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "custody-data", "ledger", "journal", "*.wal"))
	if len(segs) == 0 {
		t.Fatal("no journal segment")
	}
	for _, p := range segs {
		if fi, err := os.Stat(p); err != nil || fi.Size() != 1<<20 {
			t.Errorf("%s: %d bytes, want 1 MiB: %v", p, fi.Size(), err)
		}
	}
}
