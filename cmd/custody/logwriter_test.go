package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// countingBuffer counts the writes it takes.
type countingBuffer struct {
	lockedBuffer
	writes int // guarded by lockedBuffer.mu
}

func (c *countingBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes++
	c.mu.Unlock()
	return c.lockedBuffer.Write(p)
}

// TestLogWriter: routine lines are gathered into one write within the
// flush interval; a warning goes through at once, with what preceded it;
// Close writes the rest.
func TestLogWriter(t *testing.T) {
	var out countingBuffer
	w := newLogWriter(&out)
	log := slog.New(flushingHandler{Handler: slog.NewJSONHandler(w, nil), w: w})
	for range 100 {
		log.Info("transaction", "id", "x")
	}
	if s := out.String(); s != "" {
		t.Fatalf("routine lines written at once: %q", s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 100 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out.mu.Lock()
	lines, writes := strings.Count(out.b.String(), "\n"), out.writes
	out.mu.Unlock()
	if lines != 100 || writes != 1 {
		t.Fatalf("%d lines in %d writes after the interval, want 100 in 1", lines, writes)
	}
	log.Info("routine")
	log.Warn("index unreachable")
	if s := out.String(); !strings.Contains(s, `"msg":"routine"`) || !strings.Contains(s, `"msg":"index unreachable"`) {
		t.Fatalf("a warning did not go through at once with what preceded it: %q", s)
	}
	log.Info("last")
	w.Close()
	if !strings.Contains(out.String(), `"msg":"last"`) {
		t.Fatal("Close lost a buffered line")
	}
	w.Close() // twice: no panic
}
