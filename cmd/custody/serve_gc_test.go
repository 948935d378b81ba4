package main

import (
	"runtime/debug"
	"testing"
)

// TestGCDefault: with neither GOGC nor GOMEMLIMIT set, serve turns GOGC
// off and paces the collector by the memory floor; with GOMEMLIMIT alone
// its GOGC is serveGCPercent under the operator's limit; an operator's
// GOGC is left as the runtime read it. Each stop restores the settings.
func TestGCDefault(t *testing.T) {
	prevPercent, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer debug.SetGCPercent(prevPercent)
	settings := func() (int, int64) {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p, debug.SetMemoryLimit(-1)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	stop := setGCDefault()
	if p, l := settings(); p != -1 || l < serveMemoryFloor {
		t.Errorf("neither set: GOGC %d, limit %d MiB; want off and at least the %d MiB floor", p, l>>20, serveMemoryFloor>>20)
	}
	stop()
	if p, l := settings(); p != 100 || l != prevLimit {
		t.Errorf("after stop: GOGC %d, limit %d; want 100 and %d", p, l, prevLimit)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30) // as the runtime read it at start
	stop = setGCDefault()
	if p, l := settings(); p != serveGCPercent || l != 1<<30 {
		t.Errorf("GOMEMLIMIT=1GiB: GOGC %d, limit %d; want %d and the operator's limit", p, l, serveGCPercent)
	}
	stop()
	debug.SetMemoryLimit(prevLimit)

	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200)
	stop = setGCDefault()
	if p, _ := settings(); p != 200 {
		t.Errorf("GOGC=200: %d, want the operator's 200", p)
	}
	stop()
}
