//go:build unix

package verify_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// TestCheckTreeRoots: CheckTree's roots, at the tree's size and at sizes
// inside a bundle, at a bundle boundary and at 0, are the ones the merkle
// library computes from the leaves, and the whole tree's is the signed
// root.
func TestCheckTreeRoots(t *testing.T) {
	ctx := context.Background()
	const n = 300
	dir, l, _ := closedLog(t, n)
	src, err := verify.OpenSource(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Audit(ctx, src, l.Verifier(), "")
	if err != nil {
		t.Fatal(err)
	}
	// The reference: every prefix's root from the leaves, with compact.
	rf := &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	rng := rf.NewEmptyRange(0)
	want := map[uint64][]byte{0: rfc6962.DefaultHasher.EmptyRoot()}
	for e, err := range l.Entries(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if err := rng.Append(rfc6962.DefaultHasher.HashLeaf(e.Leaf), nil); err != nil {
			t.Fatal(err)
		}
		want[e.Index+1], _ = rng.GetRootHash(nil)
	}
	for _, at := range []uint64{0, 1, 100, 255, 256, 257, 299, 300} {
		root, rootAt, err := verify.CheckTree(ctx, src, n, at)
		if err != nil {
			t.Fatalf("at %d: %v", at, err)
		}
		if !bytes.Equal(root, rep.Root) || !bytes.Equal(root, want[n]) {
			t.Errorf("at %d: root %x, the checkpoint says %x", at, root, rep.Root)
		}
		if !bytes.Equal(rootAt, want[at]) {
			t.Errorf("root at %d: %x, want %x", at, rootAt, want[at])
		}
	}
	if _, _, err := verify.CheckTree(ctx, src, n, n+1); !errors.Is(err, verify.ErrInvalid) {
		t.Errorf("a size past the tree: %v", err)
	}
}
