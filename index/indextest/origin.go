package indextest

import (
	"context"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// testSearchByOrigin: Query.Origin finds a client's records, a canary
// probe's and an eval's apart, with the other filters; a synthetic record
// without an origin (written before leaf version 3, an eval case among
// them) is a canary probe's, as it was recorded. Stats and Breakdown
// count an eval's records apart (Eval) from a canary probe's.
func testSearchByOrigin(t *testing.T, x index.Index) {
	mk := func(id string, sec int, canary bool, o custody.Origin) index.Record {
		return index.Record{Transaction: custody.Transaction{
			ID: id, Tenant: "a", Time: t0.Add(time.Duration(sec) * time.Second), RequestedModel: "m", ResponseModel: "m",
			Provider: "p", Verdict: custody.Verified, Canary: canary, Origin: o,
		}, Shard: "s", LeafIndex: int64(sec)}
	}
	legacy := mk("legacy", 1, true, "")
	client := mk("client", 2, false, "")
	probe := mk("probe", 3, true, custody.OriginCanary)
	evalCase := mk("eval", 4, true, custody.OriginEval)
	evalRejected := mk("eval-rejected", 5, true, custody.OriginEval)
	evalRejected.Fail(custody.CheckModel, custody.CodeModelMismatch, "")
	mustPut(t, x, legacy, client, probe, evalCase, evalRejected)
	if got := mustGet(t, x, "eval"); got.Origin != custody.OriginEval || !got.Canary {
		t.Errorf("eval record read back with origin %q, canary %v", got.Origin, got.Canary)
	}
	for _, tt := range []struct {
		name string
		q    index.Query
		want []string
	}{
		{"client", index.Query{Origin: custody.OriginClient}, []string{"client"}},
		{"canary", index.Query{Origin: custody.OriginCanary}, []string{"probe", "legacy"}},
		{"eval", index.Query{Origin: custody.OriginEval}, []string{"eval-rejected", "eval"}},
		{"eval and a code", index.Query{Origin: custody.OriginEval, Code: custody.CodeModelMismatch}, []string{"eval-rejected"}},
		{"eval and a model", index.Query{Origin: custody.OriginEval, Model: "m", Limit: 1}, []string{"eval-rejected"}},
		{"canary and a verdict", index.Query{Origin: custody.OriginCanary, Verdict: custody.Rejected}, nil},
		{"unknown origin", index.Query{Origin: "cron"}, nil},
		{"any origin", index.Query{}, []string{"eval-rejected", "eval", "probe", "client", "legacy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantIDs(t, "Search", mustSearch(t, x, tt.q), tt.want...)
		})
	}
	ctx := context.Background()
	stats, err := x.Stats(ctx, index.StatsQuery{Since: t0, Until: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	count := map[custody.Origin]int64{}
	for _, r := range stats {
		switch {
		case r.Eval && r.Canary:
			count[custody.OriginEval] += r.Count
		case r.Eval:
			t.Errorf("an eval row not canary: %+v", r)
		case r.Canary:
			count[custody.OriginCanary] += r.Count
		default:
			count[custody.OriginClient] += r.Count
		}
	}
	if count[custody.OriginClient] != 1 || count[custody.OriginCanary] != 2 || count[custody.OriginEval] != 2 {
		t.Errorf("stats count by origin %v, want client 1, canary 2 (one before version 3), eval 2", count)
	}
	for _, by := range []string{index.ByTenant, index.ByCode} {
		rows, err := x.Breakdown(ctx, index.BreakdownQuery{By: by, Since: t0, Until: t0.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		var evals int64
		for _, r := range rows {
			if r.Eval {
				evals += r.Count
			}
		}
		if want := map[string]int64{index.ByTenant: 2, index.ByCode: 1}[by]; evals != want {
			t.Errorf("breakdown by %s: %d eval records, want %d: %+v", by, evals, want, rows)
		}
	}
}
