package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/verify"
)

// fixture is a closed ledger with three transactions, their receipt
// files and request/response files.
type logFixture struct {
	dir, key, receipt, request, response, stream string
}

func newLogFixture(t *testing.T) logFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	l, err := ledger.Open(ctx, ledger.Config{Dir: dir, CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var last *verify.Receipt
	req, resp := []byte(`{"model":"m","messages":[]}`), []byte("data: {}\n\ndata: [DONE]\n\n")
	for i := range 3 {
		id := fmt.Sprintf("req-%d", i)
		rs, ps := l.Salts(id)
		tx := &custody.Transaction{ID: id, Tenant: "acme", Time: time.Now(), Stream: true,
			RequestCommitment: verify.Commit(rs, req), ResponseCommitment: verify.Commit(ps, resp)}
		if last, err = l.Append(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	key := l.VerifierKey()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ := last.Marshal()
	f := logFixture{dir: dir, key: key}
	files := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(files, name)
		os.WriteFile(p, data, 0o644)
		return p
	}
	f.receipt = write("receipt.json", b)
	f.request = write("request.json", req)
	f.response = write("response.sse", resp)
	f.stream = write("stream.sse", append(append([]byte{}, resp...), ": custody-receipt req-2\n\n"...))
	return f
}

func TestVerifyCommand(t *testing.T) {
	t.Parallel() // its own data dir and ports
	f := newLogFixture(t)
	l := mustOpenHandler(t, f.dir)
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte(f.key+"\n"), 0o644)
	bad := filepath.Join(t.TempDir(), "bad.json")
	b, _ := os.ReadFile(f.receipt)
	os.WriteFile(bad, bytes.Replace(b, []byte(`"req-2"`), []byte(`"req-1"`), 1), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"dir", []string{"--log", f.dir, "--key", f.key, f.receipt}, 0},
		{"http", []string{"--log", l + "/log", "--key", keyFile, f.receipt}, 0},
		{"http gateway root", []string{"--log", l, "--key", keyFile, f.receipt}, 0},
		{"flags after receipt", []string{f.receipt, "--log", f.dir, "--key", f.key}, 0},
		{"receipt after --", []string{"--log", f.dir, "--key", f.key, "--", f.receipt}, 0},
		{"flag after -- is a receipt", []string{"--key", f.key, "--", f.receipt, "--log"}, 2},
		{"request and response", []string{"--log", f.dir, "--key", f.key, "--request", f.request, "--response", f.response, f.receipt}, 0},
		{"stream with receipt line", []string{"--log", f.dir, "--key", f.key, "--response", f.stream, f.receipt}, 0},
		{"unpinned key from the log", []string{"--log", f.dir, f.receipt}, 0},
		{"wrong request", []string{"--log", f.dir, "--key", f.key, "--request", f.response, f.receipt}, 1},
		{"wrong response", []string{"--log", f.dir, "--key", f.key, "--response", f.request, f.receipt}, 1},
		{"edited receipt", []string{"--log", f.dir, "--key", f.key, bad}, 1},
		{"not a receipt", []string{"--log", f.dir, "--key", f.key, f.request}, 1},
		{"no receipt", []string{"--log", f.dir}, 2},
		{"two receipts", []string{"--key", f.key, f.receipt, f.receipt}, 2},
		{"unknown flag", []string{"--nope", f.receipt}, 2},
		{"bad key", []string{"--key", "nonsense", f.receipt}, 2},
		{"no key, no log", []string{f.receipt}, 2},
		{"missing receipt file", []string{"--key", f.key, "/nonexistent"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := run(context.Background(), append([]string{"verify"}, tc.args...), &out, &errb); got != tc.want {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", got, tc.want, out.String(), errb.String())
			}
			if tc.want == 1 && errb.Len() == 0 {
				t.Fatal("no reason on stderr")
			}
		})
	}
}

// mustOpenHandler serves the ledger's log over HTTP and returns the URL.
func mustOpenHandler(t *testing.T, dir string) string {
	l, err := ledger.Open(context.Background(), ledger.Config{Dir: dir, CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(l.Handler())
	t.Cleanup(func() { srv.Close(); l.Close(context.Background()) })
	return srv.URL
}
