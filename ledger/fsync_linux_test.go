package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDataSyncerParksInPoller: on Linux the journal's fdatasync goes
// through AIO and its goroutine waits in the network poller ("IO wait"),
// not in a syscall that holds its P; the data it syncs is on disk, and a
// bad file is an error, not a hang.
func TestDataSyncerParksInPoller(t *testing.T) {
	ds := newAIOSyncer()
	defer ds.close()
	if !ds.async() {
		t.Fatal("Linux AIO (io_setup) refused: the journal falls back to fdatasync(2), which holds a P while it blocks")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte("custody journal "), 1<<16) // 1 MiB
	// Dirty enough pages that the flush takes a while, so that the
	// goroutine can be seen waiting; tried again if it was too quick.
	seen := false
	for attempt := 0; attempt < 20 && !seen; attempt++ {
		for i := range 32 {
			if _, err := f.WriteAt(chunk, int64(i*len(chunk))); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() { done <- syncForTest(ds, f) }()
		for waiting := true; waiting; {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("sync: %v", err)
				}
				waiting = false
			default:
				buf := make([]byte, 1<<20)
				st := string(buf[:runtime.Stack(buf, true)])
				for _, g := range strings.Split(st, "\n\n") {
					if strings.Contains(g, "syncForTest") {
						if strings.Contains(g, "[IO wait") {
							seen = true
						}
						if strings.Contains(g, "[syscall") && strings.Contains(g, "Fdatasync") {
							t.Fatalf("the sync blocks in fdatasync(2):\n%s", g)
						}
					}
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	if !seen {
		t.Skip("every sync finished before its goroutine could be seen waiting (a very fast disk)")
	}
	// The file holds what was written.
	got := make([]byte, len(chunk))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, chunk) {
		t.Fatalf("read back: %v", err)
	}
	// A file that is not open is EBADF, as fdatasync(2) says (an fd
	// number far above any this process opens).
	bad := os.NewFile(1<<20-1, "not-open")
	if err := ds.sync(bad); err != syscall.EBADF {
		t.Fatalf("sync of a file that is not open: %v, want EBADF", err)
	}
	if !ds.async() {
		t.Fatal("a bad file turned AIO off")
	}
}

//go:noinline
func syncForTest(ds *dataSyncer, f *os.File) error { return ds.sync(f) }

// TestDataSyncerByGOMAXPROCS: the journal uses AIO when the runtime has
// one P (a blocking fdatasync would stop everything) and fdatasync(2)
// when it has more (quicker, and the other Ps carry on).
func TestDataSyncerByGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if ds := newDataSyncer(); ds.async() {
		ds.close()
		t.Error("GOMAXPROCS=2: AIO, want fdatasync(2)")
	}
	runtime.GOMAXPROCS(1)
	ds := newDataSyncer()
	defer ds.close()
	if !ds.async() {
		t.Error("GOMAXPROCS=1: fdatasync(2), want AIO")
	}
}
