package ledger

import (
	"testing"

	"github.com/custody-gateway/custody/internal/marktest"
)

// TestAnOpenLogIsLightToMark: what an open, idle ledger adds to the
// pointers every collection scans stays small. The feeder's 65,536
// futures of room, in a channel of one future each, were 1.5 MB of it,
// about a quarter of a millisecond of every mark phase of serve at rest.
func TestAnOpenLogIsLightToMark(t *testing.T) {
	const limit = 512 << 10
	grown := marktest.Added(func() any { return openTest(t, t.TempDir()) })
	if grown > limit {
		t.Errorf("an open ledger added %d KB of scannable heap, over %d KB", grown>>10, limit>>10)
	}
	t.Logf("an open ledger added %d KB of scannable heap", grown>>10)
}
