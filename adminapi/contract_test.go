package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/sqlite"
)

// TestContractSeries: with buckets=, each route's contract answers are
// counted per time bucket of the window too, oldest first, every bucket,
// broken ones by code; without it, no series.
func TestContractSeries(t *testing.T) {
	ctx := context.Background()
	idx, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	srv, _ := serveIndex(t, idx)

	t0 := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	// Minute 0: 3 passed; minute 1: 1 passed, 2 broken (tool_unknown,
	// limit_exceeded); minute 2: none; minute 3: 1 broken tool_unknown.
	plan := []struct {
		minute int
		code   custody.Code
	}{{0, ""}, {0, ""}, {0, ""}, {1, ""}, {1, custody.CodeContractToolUnknown}, {1, custody.CodeContractLimitExceeded}, {3, custody.CodeContractToolUnknown}}
	var recs []index.Record
	for i, p := range plan {
		o := custody.Outcome{Check: custody.CheckContract, Status: custody.StatusOK}
		if p.code != "" {
			o.Status, o.Code = custody.StatusFlagged, p.code
		}
		recs = append(recs, index.Record{Transaction: custody.Transaction{ID: fmt.Sprintf("01KD%022d", i), Tenant: "acme",
			Time: t0.Add(time.Duration(p.minute)*time.Minute + time.Second), RequestedModel: "m", Provider: "p", Verdict: custody.Verified,
			Status: 200, Outcomes: []custody.Outcome{o}}, Shard: "s", LeafIndex: int64(i)})
	}
	if err := idx.Put(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	window := "since=" + url.QueryEscape(t0.Format(time.RFC3339)) + "&until=" + url.QueryEscape(t0.Add(4*time.Minute).Format(time.RFC3339))
	status, body := do(t, srv, "GET", "/v1/custody/contract?buckets=4&"+window, "adm-test", "")
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var out Contract
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Buckets != 4 || out.BucketMS != 60_000 || len(out.Data) != 1 {
		t.Fatalf("%s", body)
	}
	r := out.Data[0]
	if r.Checked != 7 || r.Passed != 4 || len(r.Series) != 4 {
		t.Fatalf("%+v", r)
	}
	want := []struct {
		checked, passed, unknown, limit int
	}{{3, 3, 0, 0}, {3, 1, 1, 1}, {0, 0, 0, 0}, {1, 0, 1, 0}}
	for i, w := range want {
		b := r.Series[i]
		if !b.Start.Equal(t0.Add(time.Duration(i)*time.Minute)) || b.Checked != w.checked || b.Passed != w.passed ||
			b.Broken[custody.CodeContractToolUnknown] != w.unknown || b.Broken[custody.CodeContractLimitExceeded] != w.limit {
			t.Errorf("bucket %d: %+v, want %+v", i, b, w)
		}
	}
	if b := r.Series[1]; b.PassRate < 0.333 || b.PassRate > 0.334 {
		t.Errorf("bucket 1's rate %v", b.PassRate)
	}
	status, body = do(t, srv, "GET", "/v1/custody/contract?"+window, "adm-test", "")
	if err := json.Unmarshal([]byte(body), &out); status != 200 || err != nil || out.Buckets != 0 || len(out.Data[0].Series) != 0 {
		t.Errorf("without buckets: %d %s", status, body)
	}
	if status, body = do(t, srv, "GET", "/v1/custody/contract?buckets=1001", "adm-test", ""); status != 400 {
		t.Errorf("1001 buckets: %d %s", status, body)
	}
}
