//go:build unix

package verify_test

import (
	"context"
	"slices"
	"testing"

	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/tessera/client"
)

// TestProofsMatchTessera: in a tree of 300 leaves (two tile levels, partial
// tiles at both), every inclusion proof and every consistency proof built
// from the tiles is the one tessera's own client builds.
func TestProofsMatchTessera(t *testing.T) {
	ctx := context.Background()
	dir, _, _ := closedLog(t, 300)
	src, err := verify.OpenSource(dir)
	if err != nil {
		t.Fatal(err)
	}
	inclusion, consistency := verify.Proofs(src, 300)
	pb, err := client.NewProofBuilder(ctx, 300, src.ReadTile)
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(300) {
		got, err := inclusion(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		want, err := pb.InclusionProof(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("inclusion proof of %d differs from tessera's", i)
		}
	}
	for m := range uint64(301) {
		got, err := consistency(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := pb.ConsistencyProof(ctx, m, 300)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("consistency proof %d -> 300 differs from tessera's", m)
		}
	}
}
