package config

import (
	"strings"
	"testing"
)

func TestLedgerSegmentBytes(t *testing.T) {
	base := "tenants: [{id: a, anonymous_loopback: true}]\n"
	c, err := Parse("f.yaml", []byte(base), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Ledger.SegmentBytes != 32<<20 {
		t.Errorf("ledger.segment_bytes default %d, want 32 MiB", c.Ledger.SegmentBytes)
	}
	c, err = Parse("f.yaml", []byte(base+"ledger: {segment_bytes: 2097152}\n"), env(nil))
	if err != nil || c.Ledger.SegmentBytes != 2<<20 {
		t.Fatalf("ledger.segment_bytes 2 MiB: %v %v", c.Ledger.SegmentBytes, err)
	}
	for _, bad := range []string{"-1", "4096"} {
		_, err := Parse("f.yaml", []byte(base+"ledger: {segment_bytes: "+bad+"}\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), "ledger.segment_bytes: must be at least 1048576") {
			t.Errorf("ledger.segment_bytes %s: %v", bad, err)
		}
	}
}
