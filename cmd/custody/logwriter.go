package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logWriter gathers the log's lines into a few writes: a transaction's
// line written on its own cost a write(2) per request, about 4 µs of a
// request's CPU at saturation, more than formatting it. Lines reach the
// underlying writer at least every interval, at once for warnings and
// errors (flushingHandler), and when the buffer fills or the writer is
// closed. A crash (kill -9) can lose at most one interval of lines; every
// transaction is in the ledger regardless.
type logWriter struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	stop chan struct{}
	done chan struct{}
}

// logFlushInterval bounds how long a line waits in the buffer.
const logFlushInterval = 100 * time.Millisecond

// logBufferSize is the buffer's size: lines beyond it are written at once.
const logBufferSize = 64 << 10

func newLogWriter(w io.Writer) *logWriter {
	l := &logWriter{w: w, buf: make([]byte, 0, logBufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

func (l *logWriter) run() {
	defer close(l.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.Flush()
		case <-l.stop:
			return
		}
	}
}

// Write buffers p, writing the buffer first if p does not fit.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf)+len(p) > cap(l.buf) {
		l.flushLocked()
		if len(p) > cap(l.buf) {
			return l.w.Write(p)
		}
	}
	l.buf = append(l.buf, p...)
	return len(p), nil
}

// Flush writes what is buffered.
func (l *logWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *logWriter) flushLocked() {
	if len(l.buf) > 0 {
		l.w.Write(l.buf) // as slog's handlers do, a failed log write is not retried
		l.buf = l.buf[:0]
	}
}

// Close stops the periodic flush and writes what is buffered.
func (l *logWriter) Close() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
		<-l.done
	}
	l.Flush()
}

// flushingHandler writes a warning or an error through at once: only
// routine lines (a transaction's) wait for the interval.
type flushingHandler struct {
	slog.Handler
	w *logWriter
	// json: Handler is slog.NewJSONHandler(w, nil) itself, no attributes
	// or groups added, so that a line encoded as it would encode it may
	// be written to w directly (transactionLog).
	json bool
}

// transactionLog is where the gateway may write transaction lines it
// encodes itself (gateway.Options.TransactionLog): w, when h writes
// plain JSON lines to it; else nil, and the lines go through h.
func (h flushingHandler) transactionLog() io.Writer {
	if h.json {
		return h.w
	}
	return nil
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.w.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithAttrs(as), w: h.w}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithGroup(name), w: h.w}
}
