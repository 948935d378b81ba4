package sqlite

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custody-gateway/custody/index"
)

// TestPutLetsTheNetworkIn: a Put of a large batch (the queue after an
// index outage, 16,384 records at most) runs for tens of milliseconds.
// With one P, a goroutine whose network wait is over (a request's bytes,
// the journal's fsync completion) must run within a statement or two of
// its event, not when Put ends nor when the runtime's monitor polls the
// network (every 10 ms): Put yields with background.Yield, which waits
// for the poller, where runtime.Gosched lets only runnable goroutines in.
// The event is a kernel timer's (a timerfd the poller watches), so it
// happens at a known time whatever the scheduler does.
func TestPutLetsTheNetworkIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// The collector's idle worker polls the network too: off, so that
	// only Put's yields can let the waiter in.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	x, err := OpenWithLog(t.Context(), fresh(t), everyLeaf{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	const (
		batch = 2048
		fires = 3 * time.Millisecond
		limit = 3 * time.Millisecond
	)
	n, best := 0, time.Hour
	for trial := 0; trial < 5 && best >= limit; trial++ {
		recs := make([]index.Record, batch)
		for i := range recs {
			recs[i] = gatewayRecord(n)
			n++
		}
		start, waiter := newTimerfd(t), newTimerfd(t)
		woke := make(chan time.Time, 1)
		go func() {
			var b [8]byte
			waiter.Read(b[:])
			woke <- time.Now()
		}()
		done := make(chan error, 1)
		var began time.Time
		var took time.Duration
		go func() {
			var b [8]byte
			start.Read(b[:]) // every goroutine parked: Put starts as the poller's wake-up
			began = time.Now()
			waiter.arm(t, fires)
			err := x.Put(t.Context(), recs...)
			took = time.Since(began)
			done <- err
		}()
		runtime.Gosched()
		start.arm(t, time.Millisecond)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		late := (<-woke).Sub(began.Add(fires))
		t.Logf("trial %d: Put of %d records took %s; the network waiter ran %s after its event", trial, batch, took, late)
		if took < 2*limit {
			t.Skipf("Put took %s: too quick to tell", took)
		}
		best = min(best, late)
	}
	if best >= limit {
		t.Fatalf("a goroutine whose network wait was over waited %s behind Put (limit %s): Put does not let the poller in", best, limit)
	}
}

// timerfd is a kernel timer the poller watches (File.Fd would make it
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

// arm makes the timer readable after d.
func (tf timerfd) arm(t *testing.T, d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(tf.fd, 0, &spec, nil); err != nil {
		t.Error(err)
	}
}
