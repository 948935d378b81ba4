package sqlite

import (
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custody-gateway/custody/index"
)

// TestPutLetsTheNetworkIn: a Put of a large batch (the queue after an
// index outage, 16,384 records at most) runs for tens of milliseconds.
// With one P, goroutines whose network wait is over (a request's bytes,
// the journal's fsync completion) must get the processor between Put's
// statements, not only when Put ends or when the runtime's monitor polls
// the network (every 10 ms): Put yields with background.Yield, which
// waits for the poller, where runtime.Gosched lets only runnable
// goroutines in. The network here is a kernel timer's (a timerfd the
// poller watches) that is due every 100 µs: a waiter that the poller
// hands over at each of Put's yields runs far more often than one the
// monitor hands over every 10 ms, however slow a busy machine makes Put.
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
	recs := make([]index.Record, 2048)
	for i := range recs {
		recs[i] = gatewayRecord(i)
	}
	start, network := newTimerfd(t), newTimerfd(t)
	var (
		began, ended time.Time
		wakes        int
		putErr       error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [8]byte
		start.Read(b[:]) // every goroutine parked: Put starts as the poller's wake-up
		began = time.Now()
		putErr = x.Put(t.Context(), recs...)
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
			if !began.IsZero() && ended.IsZero() {
				wakes++
			}
		}
	}()
	runtime.Gosched()
	network.every(t, 100*time.Microsecond)
	start.arm(t, time.Millisecond)
	<-done
	network.Close()
	<-counted
	if putErr != nil {
		t.Fatal(putErr)
	}
	took := ended.Sub(began)
	yields := putYields(recs)
	monitor := int(took / (10 * time.Millisecond))
	t.Logf("Put of %d records took %s and yielded %d times; the network waiter ran %d times meanwhile (the monitor's polls alone: about %d)", len(recs), took, yields, wakes, monitor)
	if 2*monitor >= yields {
		t.Skipf("Put's statements took %s each: on a machine this busy the monitor's polls alone come about as often as its yields", took/time.Duration(yields))
	}
	if 2*wakes < yields {
		t.Fatalf("the network waiter ran %d times in the %s of Put, which yielded %d times: Put does not let the poller in between its statements", wakes, took, yields)
	}
}

// putYields is how many times Put yields for recs: once a statement (as
// runs makes them, a chunk at a time) and once before its commit.
func putYields(recs []index.Record) int {
	n := 1
	count := func(lo, size int) error { n++; return nil }
	for c := range slices.Chunk(recs, putChunk) {
		terms := 0
		for i := range c {
			terms += len(index.Terms(&c[i].Transaction))
		}
		runs(len(c), count)
		runs(terms, count)
	}
	return n
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
