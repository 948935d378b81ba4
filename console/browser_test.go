package console

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/custody-gateway/custody/index"
)

const chromiumPath = "/usr/bin/chromium"

// TestBrowser drives Chromium through the console: log in, read the
// overview, look a record up, check its receipt with the request and
// response bytes. It records every request the page makes: all must go
// to the gateway.
func TestBrowser(t *testing.T) {
	if _, err := exec.LookPath(chromiumPath); err != nil {
		if os.Getenv("CUSTODY_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("CUSTODY_REQUIRE_CHROMIUM is set and %s is missing: %v", chromiumPath, err)
		}
		t.Skipf("%s is missing (apt-get install chromium)", chromiumPath)
	}
	if testing.Short() && os.Getenv("CUSTODY_REQUIRE_CHROMIUM") == "" {
		t.Skip("starts a browser")
	}
	e := newEnv(t, false)
	// The snapshot behind sim-1 drifts: a second path change for it.
	if err := e.idx.AddEvents(context.Background(), index.Event{Type: index.EventPathChange, Model: "sim-1", Provider: "sim",
		Detail: "sim|sim-1|fp_drifted"}); err != nil {
		t.Fatal(err)
	}
	shots := t.TempDir()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first call starts the browser and must not carry the timeout.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var fetched []string
	if err := chromedp.Listen(bctx, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			fetched = append(fetched, r.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()

	id := e.ids.verified
	x := e.sent[id]
	reqFile, respFile := filepath.Join(shots, "request.json"), filepath.Join(shots, "response.json")
	os.WriteFile(reqFile, x.request, 0o600)
	os.WriteFile(respFile, x.response, 0o600)

	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return s
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if name == "overview" && os.Getenv("CUSTODY_SCREENSHOT") == "1" {
			// For the README: the first screenful only.
			top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("..", "docs", "console.png"), top, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	do("opening the console", chromedp.Navigate(e.srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.ID("key")))
	loginURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	do("logging in", chromedp.SendKeys(chromedp.ID("key"), adminKey), chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("model-sim-1")))
	do("the last 15 minutes", chromedp.Navigate(e.srv.URL+"/ui/?window=15m"), chromedp.WaitVisible(chromedp.ID("model-sim-1")))
	overview := text("main")
	shot("overview")

	// The quarantined route, as the on-call sees it first.
	oos := text("#out-of-service")
	liarRow := text(`tr[id="route-liar-1/liar"]`)

	do("breakdown by code", chromedp.Navigate(e.srv.URL+"/ui/breakdowns?by=code&window=15m"), chromedp.WaitVisible(chromedp.ID("breakdown")))
	byCode := text("#breakdown")
	shot("breakdown-code")
	do("breakdown by tenant", chromedp.Click(chromedp.ID("by-tenant")), chromedp.WaitVisible(chromedp.ID("breakdown")))
	byTenant := text("#breakdown")
	do("breakdown by route", chromedp.Click(chromedp.ID("by-route")), chromedp.WaitVisible(chromedp.ID("breakdown")))
	byRoute := text("#breakdown")

	// Events, page by page through the Older link, as an operator would.
	do("opening the events", chromedp.Navigate(e.srv.URL+"/ui/events"), chromedp.WaitVisible(chromedp.CSS("table.events")))
	shot("events")
	var pages [][]string
	for range 50 {
		ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.events tbody tr")].map(r => r.id)`))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, ids)
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#older").length`))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		do("next page", chromedp.Click(chromedp.ID("older")), chromedp.WaitVisible(chromedp.CSS("p.paging")))
	}
	do("canary events", chromedp.Navigate(e.srv.URL+"/ui/events?type=canary&route=liar-1/liar"), chromedp.WaitVisible(chromedp.CSS("table.events")))
	canaryEvents := text("table.events tbody")
	do("path changes", chromedp.Navigate(e.srv.URL+"/ui/events?type=path_change&model=sim-1"), chromedp.WaitVisible(chromedp.CSS("table.events")))
	pathChanges := text("table.events tbody")

	do("looking up a record", chromedp.Navigate(e.srv.URL+"/ui/record"), chromedp.WaitVisible(chromedp.ID("id")),
		chromedp.SendKeys(chromedp.ID("id"), id), chromedp.Click(chromedp.ID("lookup")), chromedp.WaitVisible(chromedp.ID("record")))
	inLog := text("#in-log")
	shot("record")

	do("checking its receipt", chromedp.Click(chromedp.ID("check-receipt")), chromedp.WaitVisible(chromedp.ID("receipt")),
		chromedp.SetUploadFiles(chromedp.ID("request"), []string{reqFile}),
		chromedp.SetUploadFiles(chromedp.ID("response"), []string{respFile}),
		chromedp.Click(chromedp.ID("check")), chromedp.WaitVisible(chromedp.ID("result")))
	result, steps := text("#result"), text(".steps")
	shot("receipt")

	if !strings.HasSuffix(loginURL, "/ui/login") {
		t.Errorf("without a session the console went to %s, want the login page", loginURL)
	}
	for _, want := range []string{"sim-1", "liar-1", "fallback-1", "sim-fallback-1", "rejected", "failing"} {
		if !strings.Contains(overview, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	for _, want := range []string{"liar-1/liar is out of service since", "2 failing runs in a row", "echo", "fallback-1/broken is out of service"} {
		if !strings.Contains(oos, want) {
			t.Errorf("the out-of-service panel lacks %q: %s", want, oos)
		}
	}
	if !strings.Contains(liarRow, "out of service") || !strings.Contains(liarRow, "echo failed") {
		t.Errorf("the liar's route row: %q", liarRow)
	}
	if !strings.Contains(overview, "4 client transactions") || !strings.Contains(overview, "canary probes") {
		t.Errorf("overview does not count client traffic and probes apart:\n%s", overview)
	}
	if !strings.Contains(byCode, "model_mismatch") || !strings.Contains(byCode, "upstream_unavailable") {
		t.Errorf("breakdown by code:\n%s", byCode)
	}
	if !regexp.MustCompile(`acme\s+4\s`).MatchString(byTenant) {
		t.Errorf("breakdown by tenant lacks acme's 4 client transactions:\n%s", byTenant)
	}
	if !strings.Contains(byRoute, "liar-1/liar") || !strings.Contains(byRoute, "sim-1/sim") {
		t.Errorf("breakdown by route:\n%s", byRoute)
	}
	all, err := e.idx.Events(context.Background(), index.EventQuery{Limit: index.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, p := range pages {
		if len(p) > 4 || (len(p) < 4 && i < len(pages)-1) {
			t.Errorf("page %d holds %d events, want 4 (fewer on the last)", i, len(p))
		}
		for _, id := range p {
			if seen[id] {
				t.Errorf("event %s on two pages", id)
			}
			seen[id] = true
		}
	}
	if len(pages) < 3 || len(seen) != len(all) {
		t.Errorf("%d pages showed %d events; the timeline holds %d", len(pages), len(seen), len(all))
	}
	if !strings.Contains(canaryEvents, "liar-1/liar\tliar") || !strings.Contains(canaryEvents, "quarantined") || strings.Contains(canaryEvents, "echo echo") {
		t.Errorf("canary events: want the route and the provider apart, the kind, no word twice:\n%s", canaryEvents)
	}
	if !strings.Contains(pathChanges, "sim / sim-1 / fp_") || !strings.Contains(pathChanges, "→ sim / sim-1 / fp_drifted") {
		t.Errorf("path changes: want provider / model / fingerprint before → after:\n%s", pathChanges)
	}
	if strings.Contains(overview, marker) {
		t.Error("the overview shows prompt text")
	}
	if !strings.HasPrefix(inLog, "integrated: leaf") {
		t.Errorf("record's ledger line: %q", inLog)
	}
	if result != "Verified" {
		t.Errorf("receipt check: %q; steps:\n%s", result, steps)
	}
	for _, want := range []string{"signature", "request bytes", "response bytes", "in the log"} {
		if !strings.Contains(steps, want+": ✓") {
			t.Errorf("steps lack %q passing:\n%s", want, steps)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fetched) == 0 {
		t.Fatal("no requests seen: the network listener is not working")
	}
	for _, u := range fetched {
		if !strings.HasPrefix(u, e.srv.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s, outside the gateway", u)
		}
	}
	t.Logf("screenshots in %s; %d requests, all to the gateway", shots, len(fetched))
	if d := os.Getenv("CUSTODY_SHOTS"); d != "" {
		os.CopyFS(d, os.DirFS(shots))
	}
}
