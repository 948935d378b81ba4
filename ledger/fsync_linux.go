package ledger

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// fdatasync flushes f's data and the metadata needed to read it back
// (its size), which is all a journal append needs.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// A blocking syscall holds its goroutine's P until the runtime's monitor
// notices and hands the P to another thread: 20 µs at best, up to 10 ms
// once the monitor has backed off. With GOMAXPROCS=1 (any 1-CPU
// container) nothing else runs meanwhile, and the journal's fdatasync,
// a millisecond or more on a busy disk, is on every request's path: the
// gateway then idles while it waits.
//
// The committer therefore asks the kernel for the fdatasync through
// Linux native AIO (IOCB_CMD_FDSYNC, Linux 4.18+; the kernel runs the
// same vfs_fsync_range(datasync=1) as fdatasync(2) on a worker thread)
// and waits for its completion on an eventfd through Go's network
// poller: the committer goroutine parks, and its P serves requests.
// Where AIO is refused (an older kernel, a seccomp profile), it falls
// back to fdatasync(2); durability is the same either way.

// Linux ABI (include/uapi/linux/aio_abi.h).
const (
	iocbCmdFdsync = 3
	iocbFlagResfd = 1 << 0
)

type iocb struct {
	data      uint64
	key       uint32
	rwFlags   uint32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

// dataSyncer makes a file's data durable; one goroutine at a time uses
// it (the journal's syncer).
type dataSyncer struct {
	ctx uintptr  // the AIO context; 0 when AIO is not used
	ev  *os.File // its completion eventfd, polled by the runtime
}

// newDataSyncer is the journal's syncer: AIO when the runtime has one
// P, fdatasync(2) otherwise. With two or more Ps a blocking fdatasync
// holds one while the others carry on, and it is the quicker of the two:
// AIO's completion goes through a kernel worker, an eventfd and the
// poller, which in a pure append benchmark (64 appenders, GOMAXPROCS=2,
// three interleaved runs) cost a third of the group commits and 10-70 %
// of the leaves per second. With one P, holding it stops everything, and
// AIO doubled the transactions per second.
func newDataSyncer() *dataSyncer {
	if runtime.GOMAXPROCS(0) > 1 {
		return &dataSyncer{}
	}
	return newAIOSyncer()
}

// newAIOSyncer sets up AIO, or returns a syncer that calls fdatasync.
func newAIOSyncer() *dataSyncer {
	var ctx uintptr
	if _, _, e := syscall.Syscall(syscall.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return &dataSyncer{}
	}
	fd, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		syscall.Syscall(syscall.SYS_IO_DESTROY, ctx, 0, 0)
		return &dataSyncer{}
	}
	// A non-blocking fd: os registers it with the network poller, so a
	// read of it parks the goroutine instead of blocking its thread.
	return &dataSyncer{ctx: ctx, ev: os.NewFile(fd, "journal-aio-eventfd")}
}

// async reports whether the syncer waits in the poller (AIO in use).
func (s *dataSyncer) async() bool { return s.ctx != 0 }

// sync makes f's data durable, as fdatasync(2) does.
func (s *dataSyncer) sync(f *os.File) error {
	if s.ctx == 0 {
		return fdatasync(f)
	}
	cb := iocb{opcode: iocbCmdFdsync, fildes: uint32(f.Fd()), flags: iocbFlagResfd, resfd: uint32(s.ev.Fd())}
	cbs := [1]*iocb{&cb}
	for {
		n, _, e := syscall.Syscall(syscall.SYS_IO_SUBMIT, s.ctx, 1, uintptr(unsafe.Pointer(&cbs[0])))
		if e == syscall.EINTR || e == syscall.EAGAIN {
			continue
		}
		switch {
		case e == syscall.EINVAL || e == syscall.ENOSYS || e == syscall.EPERM || e == syscall.EOPNOTSUPP || (e == 0 && n != 1):
			// The kernel does not take this request (EINVAL before 4.18,
			// EPERM under some seccomp profiles): from now on, the plain
			// syscall.
			s.close()
			return fdatasync(f)
		case e != 0:
			return e // EBADF and the like: fdatasync would say the same
		}
		break
	}
	// One request in flight: the eventfd's counter reaches 1 when it
	// completes, and the read resets it.
	var cnt [8]byte
	if _, err := io.ReadFull(s.ev, cnt[:]); err != nil {
		return fmt.Errorf("waiting for the journal's fdatasync: %w", err)
	}
	var ev ioEvent
	var zero syscall.Timespec
	for {
		n, _, e := syscall.Syscall6(syscall.SYS_IO_GETEVENTS, s.ctx, 1, 1, uintptr(unsafe.Pointer(&ev)), uintptr(unsafe.Pointer(&zero)), 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return fmt.Errorf("reading the journal's fdatasync: %w", e)
		}
		if n != 1 {
			return errors.New("reading the journal's fdatasync: no completion after its eventfd fired")
		}
		break
	}
	runtime.KeepAlive(f)
	runtime.KeepAlive(&cb)
	if ev.res < 0 {
		return syscall.Errno(-ev.res)
	}
	return nil
}

// close releases the AIO context; the syncer then uses fdatasync(2).
func (s *dataSyncer) close() {
	if s.ctx == 0 {
		return
	}
	syscall.Syscall(syscall.SYS_IO_DESTROY, s.ctx, 0, 0)
	s.ev.Close()
	s.ctx, s.ev = 0, nil
}
