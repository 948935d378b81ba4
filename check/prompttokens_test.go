package check

import (
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/accounting"
)

func TestPromptTokens(t *testing.T) {
	for _, tc := range []struct {
		name     string
		local    int
		upper    bool
		parts    int
		reported int
		want     custody.Code
	}{
		{"exact", 100, false, 2, 100, ""},
		{"template slack", 100, false, 2, 100 + 2*8 + 64, ""},
		{"above slack", 100, false, 2, 100 + 2*8 + 65, custody.CodePromptTokenMismatch},
		{"placeholder", 700000, false, 1, 1, custody.CodePromptTokenMismatch},
		{"truncated", 1000, false, 1, 500, custody.CodePromptTokenMismatch},
		{"one below", 100, false, 1, 99, custody.CodePromptTokenMismatch},
		{"bytes bound honest", 4000, true, 1, 1000, ""},
		{"bytes bound placeholder", 4000, true, 1, 1, custody.CodePromptTokenMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, PromptTokens(tc.reported, accounting.PromptBand(tc.local, tc.upper, tc.parts, 8, 64)), tc.want)
		})
	}
}
