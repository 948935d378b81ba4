package backgroundtest

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Every is how often the network stand-in becomes ready in NetworkTurns.
const Every = 100 * time.Microsecond

// NetworkTurns runs run while a goroutine waits on a timerfd that is
// ready every Every, and returns how many times that goroutine ran
// meanwhile and how long run took. Call it with GOMAXPROCS=1 and the
// collector off (its idle worker polls the network too).
//
// run starts as serve's goroutines do under load: woken from the poller
// onto the one P, so that no thread is left waiting in the poller (one
// that was would hand the waiter over whatever run does). A waiter that
// only the runtime's monitor hands over runs about once in 10 ms.
func NetworkTurns(t *testing.T, run func()) (turns int, took time.Duration) {
	t.Helper()
	start, network := newTimer(t), newTimer(t)
	var began, ended time.Time
	var running atomic.Bool // between began and ended, for the waiter
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [8]byte
		start.Read(b[:]) // every goroutine parked: the P idles in the poller till now
		began = time.Now()
		running.Store(true)
		run()
		running.Store(false)
		ended = time.Now()
	}()
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		var b [8]byte
		for {
			if _, err := network.Read(b[:]); err != nil {
				return
			}
			if running.Load() {
				turns++
			}
		}
	}()
	runtime.Gosched() // both are parked in the poller
	network.set(t, Every, Every)
	start.set(t, time.Millisecond, 0)
	<-done
	network.Close()
	<-counted
	return turns, ended.Sub(began)
}

// timer is a timerfd the poller watches (Fd leaves a descriptor given
// to NewFile non-blocking).
type timer struct{ *os.File }

func newTimer(t *testing.T) timer {
	t.Helper()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		t.Skipf("no timerfd: %v", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	t.Cleanup(func() { f.Close() })
	return timer{f}
}

// set makes the timer ready after first, then every interval (0: once).
func (tm timer) set(t *testing.T, first, interval time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(first.Nanoseconds()), Interval: unix.NsecToTimespec(interval.Nanoseconds())}
	if err := unix.TimerfdSettime(int(tm.Fd()), 0, &spec, nil); err != nil {
		t.Error(err)
	}
}
