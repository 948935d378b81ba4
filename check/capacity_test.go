package check

import (
	"testing"

	"github.com/custody-gateway/custody"
)

func TestCapacity(t *testing.T) {
	for _, tc := range []struct {
		name            string
		local, capacity int
		want            custody.Code
	}{
		{"under", 10, 100, ""},
		{"at", 100, 100, ""},
		{"over by one", 101, 100, custody.CodeContextLengthExceeded},
		{"placeholder-sized capacity", 700000, 681280, custody.CodeContextLengthExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, Capacity(tc.local, tc.capacity), tc.want) })
	}
}

func TestMustCount(t *testing.T) {
	if MustCount(100, 100) || !MustCount(101, 100) {
		t.Fatal("a body no longer than capacity must skip the count; a longer one must not")
	}
}
