package custody

import (
	"testing"
	"time"
)

func TestNewIDSortsByTimeAndIsUnique(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := NewID(t0.Add(time.Duration(i) * time.Millisecond))
		if len(id) != 26 {
			t.Fatalf("id %q has %d chars", id, len(id))
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if id[:10] < prev {
			t.Fatalf("ids do not sort by time: %q after %q", id, prev)
		}
		prev = id[:10]
	}
}
