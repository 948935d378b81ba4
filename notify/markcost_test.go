package notify

import (
	"context"
	"testing"

	"github.com/custody-gateway/custody/internal/marktest"
)

// TestAnIdleNotifierIsLightToMark: the queue's room costs every
// collection little, in every serve, hooks or none: 1,024 events in
// place were 160 KB of pointers to scan.
func TestAnIdleNotifierIsLightToMark(t *testing.T) {
	var n *Notifier
	grown := marktest.Added(func() any { n = New(Config{}); return n })
	defer n.Close(context.Background())
	if limit := int64(32 << 10); grown > limit {
		t.Errorf("an idle notifier added %d KB of scannable heap, over %d KB", grown>>10, limit>>10)
	}
	t.Logf("an idle notifier added %d KB of scannable heap", grown>>10)
}
