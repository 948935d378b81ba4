package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloseWaitsForThePublisher: a checkpoint publication of tessera's in
// flight when the ledger closes has finished when Close returns, so that
// nothing writes into the directory afterwards (the fresh-clone CI once
// failed a test's TempDir removal on a publication that went on after
// Close). The test holds the publication up with a lock of its own on
// publish.lock, and lets it go only once Close has either returned (the
// bug) or is waiting for it too.
func TestCloseWaitsForThePublisher(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 20 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, logDir, ".state", "publish.lock")
	deadline := time.Now().Add(30 * time.Second)
	for { // the first publication creates the lock file
		if _, err := os.Stat(lockPath); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint publication began")
		}
		time.Sleep(5 * time.Millisecond)
	}
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLKW, &lk); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(lockPath, &st); err != nil {
		t.Fatal(err)
	}
	// The publisher wakes every checkpoint interval and blocks on the lock.
	waitLocks(t, st.Ino, func(waiters int) bool { return waiters >= 1 }, "the publisher to wait on the lock")

	closed := make(chan int) // the publications still waiting when Close returned
	go func() {
		l.Close(context.Background())
		closed <- waiters(t, st.Ino)
	}()
	// Either Close returns while the publication is held up (the bug), or
	// it waits on the lock too, beside the publisher.
	var pending int
	for done := false; !done; {
		select {
		case pending = <-closed:
			done = true
		default:
			if waiters(t, st.Ino) >= 2 {
				done = true
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("Close neither returned nor waited for the publication")
			}
			time.Sleep(time.Millisecond)
		}
	}
	lk.Type = unix.F_UNLCK
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	if pending == 0 {
		pending = <-closed
	}
	if pending != 0 {
		t.Fatalf("Close returned with %d checkpoint publication(s) of tessera's still in flight", pending)
	}
}

// waiters counts the lock requests blocked on inode ino, from /proc/locks
// (a blocked request is a line with "->").
func waiters(t *testing.T, ino uint64) int {
	t.Helper()
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skipf("no /proc/locks: %v", err)
	}
	n := 0
	suffix := fmt.Sprintf(":%d", ino)
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 7 || fs[1] != "->" {
			continue
		}
		if strings.HasSuffix(fs[6], suffix) {
			n++
		}
	}
	return n
}

func waitLocks(t *testing.T, ino uint64, ok func(int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(waiters(t, ino)) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
