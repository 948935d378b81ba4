package main

import (
	"os"
	"runtime/debug"

	"github.com/custody-gateway/custody/internal/heapfloor"
)

// serveGCPercent is serve's GOGC under an operator's GOMEMLIMIT when
// GOGC is not set. custody's live heap is mostly tables of fixed size
// (the contamination sketch, the tokenizers' ranks), and Go's default of
// 100 lets the heap grow by as much again; 75 kept RSS lower at the same
// CPU per request (docs/BENCHMARKS.md, "serve's GOGC").
const serveGCPercent = 75

// serveMemoryFloor is the memory serve's Go runtime may use before its
// collector runs, when neither GOGC nor GOMEMLIMIT is set
// (internal/heapfloor). With a floor of 60 MiB, `custody serve` at
// saturation used 99.9-101.9 MB resident in the benchmark (29 MB of it
// the binary's pages) where GOGC=75 alone used 106-114 MB in the same
// runs, and collected less often at 1,000 req/s, which is most of
// one-core's slowest hundredth; 56 MiB used 100.0 and 96.6 MB against
// 60's 100.9 and 100.9 in one run, its tail no worse. CPU per request was
// the same within the runs' noise but for one run at one-core saturation,
// +7 %: there the live heap is larger and the floor gives it less
// headroom than GOGC=75 did (docs/BENCHMARKS.md, "The slowest hundredth
// is the collector's", and the session's last run).
const serveMemoryFloor = 56 << 20

// pastFloorPercent is how much the heap may grow over its live size
// between collections once the live heap needs more than the floor. Past
// it the live heap is mostly bodies in flight, pointer-free slices a
// collection does not scan, so collecting more often costs little; at
// 75 the limit rose over the floor at the benchmark's saturation.
const pastFloorPercent = 50

// setGCDefault paces the collector when the operator has not: with
// neither GOGC nor GOMEMLIMIT set, by the memory floor and
// pastFloorPercent past it; with GOMEMLIMIT alone, by that limit and
// serveGCPercent. An operator's GOGC rules. The returned stop gives the
// runtime its settings back.
func setGCDefault() (stop func()) {
	switch {
	case os.Getenv("GOGC") != "":
		return func() {}
	case os.Getenv("GOMEMLIMIT") != "":
		prev := debug.SetGCPercent(serveGCPercent)
		return func() { debug.SetGCPercent(prev) }
	}
	return heapfloor.Start(serveMemoryFloor, pastFloorPercent).Stop
}
