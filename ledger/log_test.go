package ledger

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
)

const crashChildEnv = "LEDGER_CRASH_CHILD_DIR"

// TestCrashChild is the child of TestCrashLosesNoAcknowledgedLeaf: it
// appends from many goroutines until killed, printing each acknowledged
// index.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("only run as the child of TestCrashLosesNoAcknowledgedLeaf")
	}
	l, err := Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("crash-%d-%d", w, i)
				r, err := l.Append(context.Background(), sampleTx(l, id, nil, nil))
				if err != nil {
					continue
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %d %s end\n", r.Index, id)
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestCrashLosesNoAcknowledgedLeaf kills a process appending at full
// speed and proves that every leaf it acknowledged is in the log after
// reopening, at the index it was given, and that the log audits clean.
func TestCrashLosesNoAcknowledgedLeaf(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	ctx := context.Background()
	for round := range 2 {
		dir := t.TempDir()
		if round == 1 {
			// Second round: the child appends to a log that already has leaves.
			l := openTest(t, dir)
			appendN(t, l, 300)
			l.Close(ctx)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := map[uint64]string{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() && len(acked) < 5000 {
			f := strings.Fields(sc.Text())
			if len(f) != 4 || f[0] != "ack" || f[3] != "end" {
				continue
			}
			idx, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			acked[idx] = f[2]
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if len(acked) < 5000 {
			t.Fatalf("child acknowledged only %d leaves", len(acked))
		}

		l := openTest(t, dir)
		found := 0
		for e, err := range l.Entries(ctx, 0) {
			if err != nil {
				t.Fatal(err)
			}
			id, ok := acked[e.Index]
			if !ok {
				continue
			}
			tx, err := verify.DecodeLeaf(e.Leaf)
			if err != nil {
				t.Fatal(err)
			}
			if tx.ID != id {
				t.Fatalf("index %d holds %s, acknowledged as %s", e.Index, tx.ID, id)
			}
			found++
		}
		if found != len(acked) {
			t.Fatalf("round %d: %d of %d acknowledged leaves in the log (size %d)", round, found, len(acked), l.Size())
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		src, _ := verify.OpenSource(dir)
		rep, err := verify.Audit(ctx, src, l.Verifier(), "")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acknowledged, log size %d after recovery", round, len(acked), rep.Size)
	}
}

// TestNoPlaintextAtRest: request and response text never reach the disk;
// ids and models do (they are in the leaf, by design), tenant ids do not.
func TestNoPlaintextAtRest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := openTest(t, dir)
	for i := range 50 {
		id := fmt.Sprintf("IDMARKER-%d", i)
		req := []byte(`{"model":"MODELMARKER","messages":[{"role":"user","content":"PROMPTMARKER secret"}]}`)
		resp := []byte(`{"choices":[{"message":{"content":"RESPONSEMARKER answer"}}]}`)
		tx := sampleTx(l, id, req, resp)
		tx.Tenant = "TENANTMARKER"
		tx.RequestedModel = "MODELMARKER"
		if _, err := l.Append(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, m := range []string{"IDMARKER", "MODELMARKER", "PROMPTMARKER", "RESPONSEMARKER", "TENANTMARKER"} {
			if bytes.Contains(b, []byte(m)) {
				seen[m] = true
			}
		}
		return nil
	})
	if !seen["IDMARKER"] || !seen["MODELMARKER"] {
		t.Fatalf("the scan found no leaf data at all: %v", seen)
	}
	for _, m := range []string{"PROMPTMARKER", "RESPONSEMARKER", "TENANTMARKER"} {
		if seen[m] {
			t.Errorf("%s found under the ledger directory", m)
		}
	}
}

func TestAppendFailsClosed(t *testing.T) {
	ctx := context.Background()
	t.Run("after close", func(t *testing.T) {
		l := openTest(t, t.TempDir())
		l.Close(ctx)
		if _, err := l.Append(ctx, &custody.Transaction{ID: "x"}); !errors.Is(err, custody.ErrLedgerUnavailable) {
			t.Fatalf("Append after Close = %v", err)
		}
	})
	t.Run("overloaded", func(t *testing.T) {
		l, err := Open(ctx, Config{Dir: t.TempDir(), MaxBacklog: 1, BatchMaxAge: 500 * time.Millisecond, CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close(ctx)
		if _, err := l.Append(ctx, &custody.Transaction{ID: "a"}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ctx, &custody.Transaction{ID: "b"}); !errors.Is(err, custody.ErrLedgerUnavailable) {
			t.Fatalf("Append beyond the backlog = %v", err)
		}
	})
	t.Run("journal write fails", func(t *testing.T) {
		l := openTest(t, t.TempDir())
		l.j.f.Close() // the next write fails like a dead disk
		_, err := l.Append(ctx, &custody.Transaction{ID: "a"})
		if !errors.Is(err, custody.ErrLedgerUnavailable) {
			t.Fatalf("Append on a failed journal = %v", err)
		}
		if _, err := l.Append(ctx, &custody.Transaction{ID: "b"}); !errors.Is(err, custody.ErrLedgerUnavailable) {
			t.Fatalf("Append after a journal failure = %v", err)
		}
	})
	t.Run("second process", func(t *testing.T) {
		dir := t.TempDir()
		openTest(t, dir)
		if _, err := Open(ctx, Config{Dir: dir}); err == nil {
			t.Fatal("two ledgers opened one directory")
		}
	})
}

func TestJournalTornTail(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir)
	appendN(t, l, 3)
	// Simulate a crash: the leaves are journaled, and the next group's
	// write, where their records end, was torn.
	seg := filepath.Join(dir, journalDir, segmentName(0))
	f, err := os.OpenFile(seg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckJournal(dir)
	if err != nil || rep.Tail != seg || rep.Damage != nil {
		t.Fatalf("CheckJournal: %+v %v", rep, err)
	}
	f.WriteAt([]byte{0, 0, 0, 9, 1, 2, 3}, rep.End)
	f.Close()
	if rep, err := CheckJournal(dir); err != nil || rep.Damage == nil || !rep.Damage.Torn ||
		rep.Damage.Offset != rep.End || rep.Damage.Index != 3 {
		t.Fatalf("CheckJournal after the tear: %+v %v", rep, err)
	}
	recs, _, _, err := readJournal(filepath.Join(dir, journalDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[2].index != 2 {
		t.Fatalf("read %d records", len(recs))
	}
	if bytes.Contains(mustRead(t, seg), []byte{0, 0, 0, 9, 1, 2, 3}) {
		t.Fatal("torn tail not cut off")
	}
}

func mustRead(t testing.TB, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandler(t *testing.T) {
	dir, _, _ := closedLog(t, 300)
	l := openTest(t, dir)
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path, ctype, cache string
		status             int
	}{
		{"/log/checkpoint", "text/plain; charset=utf-8", "no-cache", 200},
		{"/log/verifier", "text/plain; charset=utf-8", "no-cache", 200},
		{"/log/tile/0/000", "application/octet-stream", "public, max-age=31536000, immutable", 200},
		{"/log/tile/entries/000", "application/octet-stream", "public, max-age=31536000, immutable", 200},
		{"/log/tile/0/001.p/44", "application/octet-stream", "no-cache", 200},
		{"/log/tile/entries/001.p/44", "application/octet-stream", "no-cache", 200},
		{"/log/tile/1/000.p/1", "application/octet-stream", "no-cache", 200},
		{"/log/tile/0/999", "", "", 404},
		{"/log/.state/treeState", "", "", 404},
		{"/log/tile/../.state/treeState", "", "", 404},
		{"/log/tile/0/000.p/0", "", "", 404},
		{"/log/tile/x/000", "", "", 404},
		{"/secret.key", "", "", 404},
	} {
		t.Run(tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
			req.URL.RawPath = tc.path // keep ".." as sent
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			if got := resp.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
		})
	}
	resp, err := http.Post(srv.URL+"/log/checkpoint", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
}
