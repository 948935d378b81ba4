package notify

import (
	"context"
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

// TestAnIdleNotifierIsLightToMark: the queue's room costs every
// collection little. A channel's buffer is scanned whole however empty,
// and 1,024 events in place were 160 KB of it, in every serve, hooks or
// none.
func TestAnIdleNotifierIsLightToMark(t *testing.T) {
	before := scannable()
	n := New(Config{})
	after := scannable()
	defer n.Close(context.Background())
	const limit = 32 << 10
	if grown := int64(after) - int64(before); grown > limit {
		t.Errorf("an idle notifier added %d KB of scannable heap, over %d KB", grown>>10, limit>>10)
	} else {
		t.Logf("an idle notifier added %d KB of scannable heap", grown>>10)
	}
}
