package gateway

import "io"

// flushOnWait reads a stream's upstream body for the SSE reader and
// flushes what has been relayed to the client before each read: a read
// is where custody may wait for the upstream, and the client must have
// every event custody has delivered before it does. Events that came in
// one read from the upstream go out in one flush, not one each: a flush
// is a write syscall (half the CPU of a stream's relay when each event
// had its own, BenchmarkProxyPathStream), and a client sees them no
// later than the upstream's own batching let custody see them. The first
// event is flushed as it is delivered: that is the stream's time to
// first byte.
type flushOnWait struct {
	r       io.Reader
	flush   func() error
	pending bool  // delivered since the last flush
	begun   bool  // the first event was delivered
	err     error // the flush's failure: the client is gone
}

func (f *flushOnWait) Read(p []byte) (int, error) {
	if err := f.flushNow(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}

// delivered notes that an event went to the client unflushed, and
// flushes the first at once; the error is the client's.
func (f *flushOnWait) delivered() error {
	f.pending = true
	if f.begun {
		return f.err
	}
	f.begun = true
	return f.flushNow()
}

// flushNow flushes what is pending; its error, the client's, sticks.
func (f *flushOnWait) flushNow() error {
	if f.err != nil {
		return f.err
	}
	if f.pending {
		f.pending = false
		f.err = f.flush()
	}
	return f.err
}
