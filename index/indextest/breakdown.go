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

// testBreakdown: a window's records are counted by tenant, code, route
// and model, each by verdict and canary; a record counts under each of
// its codes and, in the code breakdown, not at all without one.
func testBreakdown(t *testing.T, x index.Index) {
	ctx := context.Background()
	tenant := func(r index.Record, id string) index.Record { r.Tenant = id; return r }
	twoCodes := statsRecord("c", "n", 0, "q", "n-1", custody.Flagged, 200, t0.Add(2*time.Minute))
	twoCodes.Code = custody.CodeCrossRequestContamination
	twoCodes.Flag(custody.CheckContamination, custody.CodeCrossRequestContamination, "")
	twoCodes.Flag(custody.CheckModel, custody.CodeModelMismatch, "")
	recs := []index.Record{
		statsRecord("a", "m", 0, "p", "m-1", custody.Verified, 200, t0),
		canary(statsRecord("b", "m", 0, "p", "m-1", custody.Verified, 200, t0.Add(time.Minute))),
		twoCodes,
		tenant(statsRecord("d", "m", -1, "", "", custody.Rejected, 502, t0.Add(3*time.Minute)), "beta"),
		statsRecord("e", "m", 0, "p", "m-1", custody.Rejected, 502, t0.Add(time.Hour)), // at Until: out
	}
	mustPut(t, x, recs...)
	q := index.BreakdownQuery{Since: t0, Until: t0.Add(time.Hour)}
	tests := []struct {
		by   string
		want []index.BreakdownRow
	}{
		{index.ByTenant, []index.BreakdownRow{
			{Key: "acme", Verdict: custody.Flagged, Count: 1},
			{Key: "acme", Verdict: custody.Verified, Count: 1},
			{Key: "acme", Verdict: custody.Verified, Canary: true, Count: 1},
			{Key: "beta", Verdict: custody.Rejected, Count: 1},
		}},
		{index.ByCode, []index.BreakdownRow{
			{Key: string(custody.CodeCrossRequestContamination), Verdict: custody.Flagged, Count: 1},
			{Key: string(custody.CodeModelMismatch), Verdict: custody.Flagged, Count: 1},
			{Key: string(custody.CodeUpstreamUnavailable), Verdict: custody.Rejected, Count: 1},
		}},
		{index.ByRoute, []index.BreakdownRow{
			{Key: "m/", Verdict: custody.Rejected, Count: 1},
			{Key: "m/p", Verdict: custody.Verified, Count: 1},
			{Key: "m/p", Verdict: custody.Verified, Canary: true, Count: 1},
			{Key: "n/q", Verdict: custody.Flagged, Count: 1},
		}},
		{index.ByModel, []index.BreakdownRow{
			{Key: "m", Verdict: custody.Rejected, Count: 1},
			{Key: "m", Verdict: custody.Verified, Count: 1},
			{Key: "m", Verdict: custody.Verified, Canary: true, Count: 1},
			{Key: "n", Verdict: custody.Flagged, Count: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.by, func(t *testing.T) {
			q := q
			q.By = tt.by
			got, err := x.Breakdown(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Breakdown by %s =\n%+v\nwant\n%+v", tt.by, got, tt.want)
			}
		})
	}
	for _, bad := range []index.BreakdownQuery{
		{By: "colour", Since: t0, Until: t0.Add(time.Hour)},
		{By: index.ByTenant, Until: t0},
		{By: index.ByTenant, Since: t0, Until: t0},
	} {
		if _, err := x.Breakdown(ctx, bad); !errors.Is(err, custody.ErrInvalidRequest) {
			t.Errorf("Breakdown(%+v) = %v, want ErrInvalidRequest", bad, err)
		}
	}
}
