package ledger

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// awaitPublisher returns once no checkpoint publication of tessera's is in
// flight in the log directory dir. tessera's POSIX driver publishes from a
// goroutine of its own that stops when its context is cancelled but that
// its caller cannot join (transparency-dev/tessera#1111): a publication
// begun before the cancel goes on writing .state and the checkpoint after
// the appender is shut down, so a Close that returned at once would let
// it write into a directory its owner is already removing or copying.
//
// Each publication holds a POSIX record lock on .state/publish.lock.
// Such locks belong to the process, so one taken here would not wait for
// it, but an open-file-description lock conflicts with them even within
// one process: taking one blocks until the publication in flight is done.
// After the cancel the publisher's loop sees only its context (its timer
// was just rearmed), so none begins afterwards.
func awaitPublisher(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, ".state", "publish.lock"), os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return nil // nothing has ever published here
	}
	if err != nil {
		return err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	for {
		err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLKW, &lk)
		if err != unix.EINTR {
			return err
		}
	}
}
