package gateway

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

// TestKeepFinishBounded: the finish reasons a transaction keeps for its
// span are each bounded (an upstream chose them) and at most
// maxFinishReasons, however many a stream repeats.
func TestKeepFinishBounded(t *testing.T) {
	long := strings.Repeat("x", 70<<10)
	got := keepFinish(nil, []string{"stop", long})
	if len(got) != 2 || got[0] != "stop" || len(got[1]) > custody.BoundLimit || !custody.IsBoundOf(got[1], long) {
		t.Errorf("kept %d reasons, the second %d bytes; want stop and the long one bounded", len(got), len(got[1]))
	}
	for range 1000 {
		got = keepFinish(got, []string{"length"})
	}
	if len(got) != maxFinishReasons {
		t.Errorf("kept %d reasons, want at most %d", len(got), maxFinishReasons)
	}
}
