package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestReadTail: in a real execution trace of a net/http server, readTail
// finds the requests, and the three slow ones, whose handlers ran while a
// collection marked, are the slowest hundredth and overlapped a mark
// phase (two of three, in case the machine holds up another request for
// longer than a collection takes).
func TestReadTail(t *testing.T) {
	var gcs atomic.Int32 // the handlers' forced collections
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			gcs.Add(1)
			var junk [][]byte
			for i := 0; i < 2000; i++ {
				junk = append(junk, make([]byte, 1024)) // something to mark
			}
			runtime.GC()
			runtime.KeepAlive(junk)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	client := srv.Client()
	get := func(path string) {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get("/") // the connection's first request has no idle wait before it

	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("tracing: %v", err)
	}
	for i := 0; i < 296; i++ {
		get("/")
		if i%100 == 50 {
			get("/slow")
		}
	}
	get("/")
	// Twelve waits of a stand-in for the journal's fsync wait, three of
	// them across a collection (the sleep lets the waiter park: a
	// machine that holds it up for a millisecond loses a wait or two).
	for i := range 12 {
		c, done := make(chan struct{}), make(chan struct{})
		go func() { commitWait(c); close(done) }()
		time.Sleep(time.Millisecond)
		if i%4 == 3 {
			junk := make([][]byte, 0, 2000)
			for range 2000 {
				junk = append(junk, make([]byte, 1024))
			}
			runtime.GC()
			runtime.KeepAlive(junk)
		}
		close(c)
		<-done
	}
	// And four in a syscall, as the journal's fdatasync with two Ps.
	for range 4 {
		commitSyscall()
	}
	trace.Stop()
	path := filepath.Join(t.TempDir(), "open.trace")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	rep, err := readTail(path, commitSites{parked: ".commitWait", syscall: ".commitSyscall"})
	if err != nil {
		t.Fatal(err)
	}
	// A request whose bytes arrived before its connection's goroutine
	// waited for them is counted with the one before: here the client
	// sends the next at once; under the bench's open loop a connection
	// is idle for tens of milliseconds between requests.
	if rep.Requests < 250 || rep.Requests > 300 {
		t.Errorf("%d requests, want most of the 300 traced", rep.Requests)
	}
	if rep.Slowest != 2 && rep.Slowest != 3 || rep.SlowestInGC < rep.Slowest-1 {
		t.Errorf("slowest 1 %%: %d, %d in a mark phase; want 2 or 3, the /slow ones in one", rep.Slowest, rep.SlowestInGC)
	}
	if n := int(gcs.Load()); rep.Collections < n {
		t.Errorf("%d collections, want at least the %d forced", rep.Collections, n)
	}
	if rep.MiddleInGC > rep.Middle/2 {
		t.Errorf("%d of the middle %d in a mark phase", rep.MiddleInGC, rep.Middle)
	}
	if rep.Commits < 13 || rep.Commits > 16 || rep.CommitsInGC < 2 || rep.CommitsInGC > 4 {
		t.Errorf("%d commit waits, %d overlapping a mark phase; want 16 (13 at least), 3 (2 to 4: one lost, or a collection of the runtime's own)", rep.Commits, rep.CommitsInGC)
	}
	if rep.CommitP50 < 200*time.Microsecond || rep.InGCP50 < 200*time.Microsecond {
		t.Errorf("commit waits p50 %v, across a collection %v: want at least the 200µs each lasted", rep.CommitP50, rep.InGCP50)
	}
	for _, want := range []string{"overlapped a GC mark phase", "the journal's fsync waits:"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("report %q, want %q in it", rep, want)
		}
	}
}

// commitWait stands in the test for the journal's wait for its AIO fsync.
//
//go:noinline
func commitWait(c <-chan struct{}) { <-c }

// commitSyscall stands in for its fdatasync: a syscall that blocks.
//
//go:noinline
func commitSyscall() {
	ts := syscall.NsecToTimespec(int64(200 * time.Microsecond))
	syscall.Nanosleep(&ts, nil)
}
