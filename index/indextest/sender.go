package indextest

import (
	"context"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// testSearchBySender: Query.Sender finds a client's records, a canary
// probe's and an eval's apart, with the other filters; a synthetic record
// without an sender (written before leaf version 3, an eval case among
// them) is a canary probe's, as it was recorded. Stats and Breakdown
// count an eval's records apart (Eval) from a canary probe's.
func testSearchBySender(t *testing.T, x index.Index) {
	mk := func(id string, sec int, canary bool, o custody.Sender) index.Record {
		return index.Record{Transaction: custody.Transaction{
			ID: id, Tenant: "a", Time: t0.Add(time.Duration(sec) * time.Second), RequestedModel: "m", ResponseModel: "m",
			Provider: "p", Verdict: custody.Verified, Canary: canary, Sender: o,
		}, Shard: "s", LeafIndex: int64(sec)}
	}
	legacy := mk("legacy", 1, true, "")
	client := mk("client", 2, false, "")
	probe := mk("probe", 3, true, custody.SenderCanary)
	evalCase := mk("eval", 4, true, custody.SenderEval)
	evalRejected := mk("eval-rejected", 5, true, custody.SenderEval)
	evalRejected.Fail(custody.CheckModel, custody.CodeModelMismatch, "")
	mustPut(t, x, legacy, client, probe, evalCase, evalRejected)
	if got := mustGet(t, x, "eval"); got.Sender != custody.SenderEval || !got.Canary {
		t.Errorf("eval record read back with sender %q, canary %v", got.Sender, got.Canary)
	}
	for _, tt := range []struct {
		name string
		q    index.Query
		want []string
	}{
		{"client", index.Query{Sender: custody.SenderClient}, []string{"client"}},
		{"canary", index.Query{Sender: custody.SenderCanary}, []string{"probe", "legacy"}},
		{"eval", index.Query{Sender: custody.SenderEval}, []string{"eval-rejected", "eval"}},
		{"eval and a code", index.Query{Sender: custody.SenderEval, Code: custody.CodeModelMismatch}, []string{"eval-rejected"}},
		{"eval and a model", index.Query{Sender: custody.SenderEval, Model: "m", Limit: 1}, []string{"eval-rejected"}},
		{"canary and a verdict", index.Query{Sender: custody.SenderCanary, Verdict: custody.Rejected}, nil},
		{"unknown sender", index.Query{Sender: "cron"}, nil},
		{"any sender", index.Query{}, []string{"eval-rejected", "eval", "probe", "client", "legacy"}},
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
	count := map[custody.Sender]int64{}
	for _, r := range stats {
		switch {
		case r.Eval && r.Canary:
			count[custody.SenderEval] += r.Count
		case r.Eval:
			t.Errorf("an eval row not canary: %+v", r)
		case r.Canary:
			count[custody.SenderCanary] += r.Count
		default:
			count[custody.SenderClient] += r.Count
		}
	}
	if count[custody.SenderClient] != 1 || count[custody.SenderCanary] != 2 || count[custody.SenderEval] != 2 {
		t.Errorf("stats count by sender %v, want client 1, canary 2 (one before version 3), eval 2", count)
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
