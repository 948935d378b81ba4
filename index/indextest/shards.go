package indextest

import (
	"slices"
	"testing"

	"github.com/custody-gateway/custody/index"
)

func testMaxLeafIndex(t *testing.T, x index.Index) {
	ctx := t.Context()
	if n, err := x.MaxLeafIndex(ctx, "a"); err != nil || n != -1 {
		t.Fatalf("MaxLeafIndex of an empty index = %d, %v; want -1", n, err)
	}
	rec := func(id, shard string, leaf int64) index.Record {
		r := full(id)
		r.Shard, r.LeafIndex = shard, leaf
		return r
	}
	mustPut(t, x, rec("1", "a", 3), rec("2", "a", 10), rec("3", "a", -1), rec("4", "b", 5), rec("5", "c", -1))
	for _, tt := range []struct {
		shard string
		want  int64
	}{{"a", 10}, {"b", 5}, {"c", -1}, {"d", -1}} {
		if n, err := x.MaxLeafIndex(ctx, tt.shard); err != nil || n != tt.want {
			t.Errorf("MaxLeafIndex(%q) = %d, %v; want %d", tt.shard, n, err, tt.want)
		}
	}
}

func testShards(t *testing.T, x index.Index) {
	ctx := t.Context()
	if ss, err := x.Shards(ctx); err != nil || len(ss) != 0 {
		t.Fatalf("Shards of an empty index = %v, %v", ss, err)
	}
	b := index.Shard{Origin: "custody.example/log/b", URL: "https://b.example/log", VerifierKey: "b+1234+AAAA"}
	a := index.Shard{Origin: "custody.example/log/a", URL: "https://a.example/log", VerifierKey: "a+1234+AAAA"}
	for _, s := range []index.Shard{b, a} {
		if err := x.RegisterShard(ctx, s); err != nil {
			t.Fatalf("RegisterShard: %v", err)
		}
	}
	a.URL, a.VerifierKey = "https://a2.example/log", "a+5678+BBBB"
	if err := x.RegisterShard(ctx, a); err != nil {
		t.Fatalf("RegisterShard again: %v", err)
	}
	ss, err := x.Shards(ctx)
	if err != nil {
		t.Fatalf("Shards: %v", err)
	}
	if want := []index.Shard{a, b}; !slices.Equal(ss, want) {
		t.Errorf("Shards = %+v, want %+v", ss, want)
	}
	if err := x.RegisterShard(ctx, index.Shard{URL: "x"}); err == nil {
		t.Error("RegisterShard without an origin succeeded")
	}
}
