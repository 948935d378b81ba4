package background

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestYieldLetsTheNetworkIn: with one P, a background loop of work and
// yields must let the goroutines whose network wait is over run at each
// of its yields, not only when the runtime's monitor polls the network
// (every 10 ms). The network is a kernel timer's (a timerfd the poller
// watches) due every 100 µs, and the loop is a hundred pieces of 200 µs:
// a waiter handed over at each yield runs about a hundred times, one the
// monitor hands over about twice (logged as the control, with
// runtime.Gosched between the pieces).
func TestYieldLetsTheNetworkIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// The collector's idle worker polls the network too: off, so that
	// only the yields can let the waiter in.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const pieces, piece = 100, 200 * time.Microsecond
	wakes, took := networkWakes(t, runtime.Gosched, pieces, piece)
	t.Logf("with runtime.Gosched between %d pieces (%s) the waiter ran %d times", pieces, took, wakes)
	wakes, took = networkWakes(t, Yield, pieces, piece)
	monitor := int(took / (10 * time.Millisecond))
	t.Logf("with Yield between %d pieces (%s) the waiter ran %d times (the monitor's polls alone: about %d)", pieces, took, wakes, monitor)
	if 2*monitor >= pieces {
		t.Skipf("%d pieces of %s took %s: on a machine this busy the monitor's polls alone come about as often as the yields", pieces, piece, took)
	}
	if 2*wakes < pieces {
		t.Fatalf("a goroutine whose network wait was over ran %d times in %d yields: Yield does not let the poller in", wakes, pieces)
	}
}

// networkWakes runs pieces busy pieces with yield after each, and counts
// how often a goroutine waiting on a timerfd due every 100 µs ran
// meanwhile. The loop starts as serve's goroutines do under load: woken
// from the poller onto the one P, so that no thread is left waiting in
// the poller (one that was would hand the waiter over whatever the loop
// does).
func networkWakes(t *testing.T, yield func(), pieces int, piece time.Duration) (wakes int, took time.Duration) {
	t.Helper()
	start, network := newTimerfd(t), newTimerfd(t)
	var began, ended time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		var n [8]byte
		start.Read(n[:]) // every goroutine parked: the P idles in the poller till now
		began = time.Now()
		for range pieces {
			for p := time.Now(); time.Since(p) < piece; {
			}
			yield()
		}
		ended = time.Now()
	}()
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		var n [8]byte
		for {
			if _, err := network.Read(n[:]); err != nil {
				return
			}
			if !began.IsZero() && ended.IsZero() {
				wakes++
			}
		}
	}()
	runtime.Gosched() // both are parked in the poller
	network.every(t, 100*time.Microsecond)
	start.arm(t, time.Millisecond)
	<-done
	network.Close()
	<-counted
	return wakes, ended.Sub(began)
}

// timerfd is a kernel timer the poller watches (f.Fd would make it
// blocking: the descriptor is kept apart).
type timerfd struct {
	*os.File
	fd int
}

func newTimerfd(t *testing.T) timerfd {
	t.Helper()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		t.Skipf("no timerfd: %v", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	t.Cleanup(func() { f.Close() })
	return timerfd{f, fd}
}

// every makes the timer readable every d from d on.
func (tf timerfd) every(t *testing.T, d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	if err := unix.TimerfdSettime(tf.fd, 0, &unix.ItimerSpec{Interval: ts, Value: ts}, nil); err != nil {
		t.Error(err)
	}
}

// arm makes the timer readable after d.
func (tf timerfd) arm(t *testing.T, d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(tf.fd, 0, &spec, nil); err != nil {
		t.Error(err)
	}
}
