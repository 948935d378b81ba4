package console

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// TestBrowserContract drives Chromium to the Contract page: each route's
// contract pass rate, overall and by broken clause, per time bucket, as
// the admin API's contract series gives it. A route whose answers broke
// contract_tool_unknown 2 times in 8 shows 75.0% overall and on that
// clause's row, its bucket marked broken; the gateway's own honest chat
// traffic shows 100.0%.
func TestBrowserContract(t *testing.T) {
	needChromium(t)
	e := newEnv(t, false)
	now := time.Now()
	var recs []index.Record
	for i := range 8 {
		o := custody.Outcome{Check: custody.CheckContract, Status: custody.StatusOK}
		if i%4 == 0 {
			o = custody.Outcome{Check: custody.CheckContract, Status: custody.StatusFailed, Code: custody.CodeContractToolUnknown}
		}
		recs = append(recs, index.Record{Transaction: custody.Transaction{ID: fmt.Sprintf("01KC%022d", i), Tenant: "acme",
			Time: now.Add(-time.Duration(i) * time.Second), RequestedModel: "tools-1", ResponseModel: "tools-1-0827", Provider: "sloppy",
			Verdict: custody.Verified, Status: 200, Outcomes: []custody.Outcome{{Check: custody.CheckModel, Status: custody.StatusOK}, o}},
			Shard: "s", LeafIndex: int64(1000 + i)})
	}
	if err := e.idx.Put(context.Background(), recs...); err != nil {
		t.Fatal(err)
	}
	bctx := startChromium(t)
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return s
	}
	do("logging in", chromedp.Navigate(e.srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), adminKey), chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("model-sim-1")))
	do("the contract page", chromedp.Navigate(e.srv.URL+"/ui/contract?window=15m"),
		chromedp.WaitVisible(chromedp.CSS(`section[data-route="tools-1/sloppy"]`)))

	sloppy := `section[data-route="tools-1/sloppy"]`
	if got := text(sloppy + " .contract-overall"); got != "75.0%" {
		t.Errorf("the sloppy route's rate %q, want 75.0%%", got)
	}
	if got := text(sloppy + " h2"); !strings.Contains(got, "6 of 8 answers") {
		t.Errorf("the sloppy route's heading %q", got)
	}
	clause := sloppy + ` tr[data-code="contract_tool_unknown"]`
	row := text(clause)
	if !strings.Contains(row, "contract_tool_unknown") || !strings.Contains(row, "75.0%") {
		t.Errorf("the clause's row %q", row)
	}
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+"`"+clause+` td.broken`+"`"+`)].map(c => c.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) != 1 || broken[0] != "75.0%" {
		t.Errorf("the clause's broken buckets %q, want one at 75.0%%", broken)
	}
	cols, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector(`+"`"+sloppy+` thead tr`+"`"+`).children.length`))
	if err != nil {
		t.Fatal(err)
	}
	if cols != 2+contractBuckets {
		t.Errorf("%d columns, want the clause, the window and %d buckets", cols, contractBuckets)
	}
	if got := text(`section[data-route="sim-1/sim"] .contract-overall`); got != "100.0%" {
		t.Errorf("the honest route's rate %q, want 100.0%%", got)
	}
}
