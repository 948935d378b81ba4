package main

import (
	"os"
	"runtime/debug"
)

// serveGCPercent is serve's garbage-collection target when GOGC is not
// set. custody's live heap is mostly tables of fixed size (the
// contamination sketch, the tokenizers' ranks: about 22 MB of a loaded
// gateway's), and Go's default of 100 lets the heap grow by as much again
// between collections. 75 kept RSS at saturation 6 MB lower one-core
// (96.4 against 102.3 MB) at the same CPU per request, and 1.5 MB lower
// two-core at +5 % (within the runs' noise); 50 was 10-16 MB lower but
// +21 % two-core (docs/BENCHMARKS.md, "serve's GOGC").
const serveGCPercent = 75

// setGCDefault applies serveGCPercent unless the operator set GOGC.
func setGCDefault() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
}
