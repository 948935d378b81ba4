package verify

import (
	"testing"
)

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestAuditHashesWithoutPerLeafAllocation: hashing a full bundle into the
// range allocates a constant few objects, not one per leaf.
func TestAuditHashesWithoutPerLeafAllocation(t *testing.T) {
	var raw []byte
	for i := range 256 {
		leaf := []byte("leaf " + itoa(int64(i)))
		raw = append(raw, byte(len(leaf)>>8), byte(len(leaf)))
		raw = append(raw, leaf...)
	}
	a := newAuditor(nil, 1<<40)
	tile := make([]byte, 256*32)
	a.bundle(0, raw, tile) // fills a.hashes; the tile check fails, which is fine here
	copy(tile, a.hashes[:])
	bi := uint64(0)
	allocs := testing.AllocsPerRun(100, func() {
		if err := a.bundle(bi, raw, tile); err != nil {
			t.Fatal(err)
		}
		bi++
	})
	if allocs > 8 {
		t.Fatalf("%.0f allocations per bundle of 256 leaves", allocs)
	}
}
