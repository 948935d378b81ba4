//go:build unix

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/ledger"
)

// TestDescribeLoss: repair's account of what cutting the journal drops
// separates what the log already holds from acknowledged transactions
// lost for good, by index.
func TestDescribeLoss(t *testing.T) {
	var b bytes.Buffer
	describeLoss(&b, &ledger.Damage{Index: 5, After: []uint64{6, 7, 8, 9, 11}}, 8)
	for _, want := range []string{
		"drops the bad record and the 5 intact records after it",
		"3 already in the log (its checkpoint holds 8 leaves), so nothing of them is lost: 5-7",
		"3 NOT in the log: acknowledged transactions lost for good, whose receipts will not verify: 8-9, 11",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}
