package main

import (
	"runtime/debug"
	"testing"
)

// TestGCDefault: serve's GOGC is serveGCPercent unless the operator set
// GOGC, which is left as the runtime read it.
func TestGCDefault(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	setGCDefault()
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Errorf("GOGC unset: %d, want %d", got, serveGCPercent)
	}
	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200) // as the runtime read it at start
	setGCDefault()
	if got := debug.SetGCPercent(100); got != 200 {
		t.Errorf("GOGC=200: %d, want the operator's 200", got)
	}
}
