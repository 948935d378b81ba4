package background

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/custody-gateway/custody/internal/background/backgroundtest"
)

// TestYieldLetsTheNetworkIn: with one P, a background loop of work and
// yields must let the goroutines whose network wait is over run at each
// of its yields, not only when the runtime's monitor polls the network
// (every 10 ms). The loop is a hundred pieces of 200 µs: a waiter handed
// over at each yield runs about a hundred times, one the monitor hands
// over about twice (logged as the control, with runtime.Gosched between
// the pieces).
func TestYieldLetsTheNetworkIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// The collector's idle worker polls the network too: off, so that
	// only the yields can let the waiter in.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const pieces, piece = 100, 200 * time.Microsecond
	loop := func(yield func()) func() {
		return func() {
			for range pieces {
				for p := time.Now(); time.Since(p) < piece; {
				}
				yield()
			}
		}
	}
	turns, took := backgroundtest.NetworkTurns(t, loop(runtime.Gosched))
	t.Logf("with runtime.Gosched between %d pieces (%s) the waiter ran %d times", pieces, took, turns)
	turns, took = backgroundtest.NetworkTurns(t, loop(Yield))
	monitor := int(took / (10 * time.Millisecond))
	t.Logf("with Yield between %d pieces (%s) the waiter ran %d times (the monitor's polls alone: about %d)", pieces, took, turns, monitor)
	if 2*monitor >= pieces {
		t.Skipf("%d pieces of %s took %s: on a machine this busy the monitor's polls alone come about as often as the yields", pieces, piece, took)
	}
	if 2*turns < pieces {
		t.Fatalf("a goroutine whose network wait was over ran %d times in %d yields: Yield does not let the poller in", turns, pieces)
	}
}
