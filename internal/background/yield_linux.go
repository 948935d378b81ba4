package background

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Yield lets every goroutine that is runnable, and every one whose wait
// on the network is over (a request's bytes, an upstream's answer, the
// journal's fsync completion, which arrives as an eventfd), run before the
// caller goes on.
//
// runtime.Gosched does only the first half. The scheduler looks at the
// network poller only when it has no runnable goroutine, and a goroutine
// that yields with Gosched is runnable again at once: with one P
// (GOMAXPROCS=1) a loop of work and Goscheds keeps every network wait
// pending until it ends, or until the runtime's monitor polls, after 10
// ms. Yield parks the caller on a timer of the kernel's (a timerfd) that
// the poller reports: the caller becomes runnable only through the
// poller, so by the time it runs again the poller has been asked, and
// everything it reported is queued beside it.
//
// With more than one P, a P left idle has its thread wait in the poller,
// which hands the ready goroutines over: there Yield is runtime.Gosched
// alone, as it is where a timerfd cannot be had.
func Yield() {
	// The goroutines already runnable first: the timer below may have
	// expired before the caller parks (its thread preempted in between),
	// and then the caller would not wait at all.
	runtime.Gosched()
	if runtime.GOMAXPROCS(0) > 1 {
		return
	}
	t := take()
	if t == nil {
		return
	}
	defer give(t)
	spec := unix.ItimerSpec{Value: unix.Timespec{Nsec: Pause.Nanoseconds()}}
	if err := unix.TimerfdSettime(int(t.Fd()), 0, &spec, nil); err != nil {
		return
	}
	var n [8]byte
	t.Read(n[:]) // parks in the poller until the timer expires
}

// idle holds the timers (non-blocking timerfds, registered with the
// runtime's poller) not in use: background goroutines are few, and each
// keeps one only while it yields.
var idle = make(chan *os.File, 8)

func take() *os.File {
	select {
	case t := <-idle:
		return t
	default:
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	// A non-blocking fd: os registers it with the poller, so a Read parks
	// the goroutine instead of blocking its thread (and Fd leaves it
	// non-blocking, as it does any fd given to NewFile so).
	return os.NewFile(uintptr(fd), "background-yield-timerfd")
}

func give(t *os.File) {
	select {
	case idle <- t:
	default:
		t.Close()
	}
}
