package verify

import (
	"errors"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

func TestConfigChain(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cfgLeaf := func(prev int64) []byte {
		b, err := EncodeConfigLeaf(ConfigLeaf{Reason: "start", Version: "dev", Digest: "ab", Policies: []byte(`{"p": {"fallback": "deny"}}`), Previous: prev}, at)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	txLeaf := func(cl *uint64) []byte {
		b, err := EncodeLeaf(&custody.Transaction{ID: "r", Time: at, ConfigLeaf: cl, Duration: 12345678901234})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	evalLeaf := func(cl *uint64) []byte { // version 3
		b, err := EncodeLeaf(&custody.Transaction{ID: "r", Time: at, Canary: true, Sender: custody.SenderEval, ConfigLeaf: cl, Duration: 12345678901234})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	u := func(n uint64) *uint64 { return &n }
	for _, tc := range []struct {
		name   string
		leaves [][]byte
		ok     bool
	}{
		{"v1 leaves, no config", [][]byte{txLeaf(nil), txLeaf(nil)}, true},
		{"chain", [][]byte{txLeaf(nil), cfgLeaf(-1), txLeaf(u(1)), cfgLeaf(1), txLeaf(u(3)), txLeaf(u(1))}, true},
		{"broken chain", [][]byte{cfgLeaf(-1), txLeaf(u(0)), cfgLeaf(-1)}, false},
		{"chain skips one", [][]byte{cfgLeaf(-1), cfgLeaf(0), cfgLeaf(0)}, false},
		{"names a transaction", [][]byte{cfgLeaf(-1), txLeaf(u(0)), txLeaf(u(1))}, false},
		{"names a later leaf", [][]byte{txLeaf(u(1)), cfgLeaf(-1)}, false},
		{"version 3 leaves in the chain", [][]byte{evalLeaf(nil), cfgLeaf(-1), evalLeaf(u(1)), txLeaf(u(1))}, true},
		{"a version 3 leaf names a transaction", [][]byte{cfgLeaf(-1), txLeaf(u(0)), evalLeaf(u(1))}, false},
		{"a version 3 leaf names a later leaf", [][]byte{evalLeaf(u(1)), cfgLeaf(-1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConfigChain()
			var err error
			for i, l := range tc.leaves {
				if err = c.leaf(uint64(i), l); err != nil {
					break
				}
			}
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	// Policies are compacted into canonical form; the leaf round-trips.
	b := cfgLeaf(-1)
	cl, err := DecodeConfigLeaf(b)
	if err != nil || string(cl.Policies) != `{"p":{"fallback":"deny"}}` || !IsConfigLeaf(b) {
		t.Fatalf("%s: %v", b, err)
	}
	if p, ok := cl.Policy("p"); !ok || string(p) != `{"fallback":"deny"}` {
		t.Fatalf("policy %s", p)
	}
	if _, err := DecodeLeaf(b); err == nil {
		t.Fatal("a config leaf decodes as a transaction")
	}
}
