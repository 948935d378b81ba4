// Package marktest measures, for tests, what the garbage collector must
// scan: every collection scans each pointer-bearing object whole (a
// channel's buffer however empty), so what a long-lived structure adds
// there is paid again by every mark phase of the process's life.
package marktest

import (
	"runtime"
	"runtime/metrics"
)

// Scannable is the heap a collection scans for pointers, read after one.
func Scannable() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Added is the scannable heap that what build returns adds, measured
// while it is still reachable.
func Added(build func() any) int64 {
	before := Scannable()
	v := build()
	after := Scannable()
	runtime.KeepAlive(v)
	return int64(after) - int64(before)
}
