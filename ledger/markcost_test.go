package ledger

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// scannable is the heap that a collection scans for pointers, measured
// after one.
func scannable() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestAnOpenLogIsLightToMark: what an open, idle ledger adds to the
// pointers every collection scans stays small. Every collection scans a
// channel's buffer whole, however empty: the feeder's 65,536 futures of
// room, one at a time, were 1.5 MB of it, about a quarter of a
// millisecond of every mark phase of serve at rest.
func TestAnOpenLogIsLightToMark(t *testing.T) {
	before := scannable()
	l := openTest(t, t.TempDir())
	after := scannable()
	runtime.KeepAlive(l)
	const limit = 512 << 10
	if grown := int64(after) - int64(before); grown > limit {
		t.Errorf("an open ledger added %d KB of scannable heap, over %d KB", grown>>10, limit>>10)
	} else {
		t.Logf("an open ledger added %d KB of scannable heap", grown>>10)
	}
}
