package indextest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

func statsRecord(id, model string, route int, provider, resp string, v custody.Verdict, status int, at time.Time, chain ...string) index.Record {
	r := index.Record{Transaction: custody.Transaction{ID: id, Tenant: "acme", Time: at, RequestedModel: model, Route: route,
		Provider: provider, ResponseModel: resp, Verdict: v, Status: status, FallbackChain: chain}, Shard: "s", LeafIndex: -1}
	if v == custody.Rejected {
		r.Code = custody.CodeUpstreamUnavailable
	}
	return r
}

func canary(r index.Record) index.Record {
	r.Canary = true
	return r
}

// testStats: records are counted in their time bucket by model, route,
// provider, response model, verdict, code, fallback and canary; the
// window is half-open; a fallback is one that was served.
func testStats(t *testing.T, x index.Index) {
	ctx := context.Background()
	recs := []index.Record{
		statsRecord("a", "m", 0, "p", "m-1", custody.Verified, 200, t0),
		statsRecord("b", "m", 0, "p", "m-1", custody.Verified, 200, t0.Add(time.Minute)),
		statsRecord("c", "m", 1, "q", "m-1", custody.Verified, 200, t0.Add(time.Hour+1), "p", "q"),
		statsRecord("d", "n", -1, "", "", custody.Rejected, 502, t0.Add(30*time.Minute), "p", "q"),
		canary(statsRecord("g", "m", 0, "p", "m-1", custody.Verified, 200, t0.Add(time.Minute))),
		statsRecord("e", "m", 0, "p", "m-1", custody.Flagged, 200, t0.Add(2*time.Hour)),      // at Until: out
		statsRecord("f", "m", 0, "p", "m-1", custody.Flagged, 200, t0.Add(-time.Nanosecond)), // before Since: out
	}
	if err := x.Put(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	got, err := x.Stats(ctx, index.StatsQuery{Since: t0, Until: t0.Add(2 * time.Hour), Buckets: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []index.StatsRow{
		{Bucket: 0, RequestedModel: "m", Route: 0, Provider: "p", ResponseModel: "m-1", Verdict: custody.Verified, Count: 2},
		{Bucket: 0, RequestedModel: "m", Route: 0, Provider: "p", ResponseModel: "m-1", Verdict: custody.Verified, Canary: true, Count: 1},
		{Bucket: 0, RequestedModel: "n", Route: -1, Verdict: custody.Rejected, Code: custody.CodeUpstreamUnavailable, Count: 1},
		{Bucket: 1, RequestedModel: "m", Route: 1, Provider: "q", ResponseModel: "m-1", Verdict: custody.Verified, Fallback: true, Count: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Stats =\n%+v\nwant\n%+v", got, want)
	}

	one, err := x.Stats(ctx, index.StatsQuery{Since: t0.Add(-time.Hour), Until: t0.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range one {
		if r.Bucket != 0 {
			t.Errorf("zero Buckets means one bucket; got row %+v", r)
		}
		n += r.Count
	}
	if n != int64(len(recs)) {
		t.Errorf("one bucket counts %d records, want %d", n, len(recs))
	}

	for _, q := range []index.StatsQuery{
		{Until: t0},
		{Since: t0, Until: t0},
		{Since: t0, Until: t0.Add(time.Hour), Buckets: index.MaxBuckets + 1},
		{Since: t0, Until: t0.Add(time.Hour), Buckets: -1},
	} {
		if _, err := x.Stats(ctx, q); !errors.Is(err, custody.ErrInvalidRequest) {
			t.Errorf("Stats(%+v) = %v, want ErrInvalidRequest", q, err)
		}
	}
}
