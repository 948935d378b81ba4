package console

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Two suites on sim-1/sim: smoke passes on the honest simulator (and the
// policy summaries requires it), picky fails its case never-said.
var panelSuites = map[string]string{
	"smoke": `{"id": "greeting", "prompt": "Say hello and quote zulu9999", "assert": {"contains": "zulu9999"}}` + "\n",
	"picky": `{"id": "never-said", "prompt": "Say hello", "assert": {"equals": "a sentence no simulator says"}}` + "\n",
}

// TestBrowserEvalPanel drives Chromium to the overview of a gateway with
// evaluation suites: sim-1's card has a panel for its route with the
// last run of each suite, its baseline, the failing case by id with the
// assertion that failed, the policies that require it and whether they
// may use the route; the events page filters the runs by type eval.
func TestBrowserEvalPanel(t *testing.T) {
	needChromium(t)
	e := newEnvWith(t, envOptions{evals: panelSuites, evalOrder: []string{"smoke", "picky"}})
	shots := t.TempDir()
	ctx, cancel := context.WithTimeout(startChromium(t), 60*time.Second)
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
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	do("logging in", chromedp.Navigate(e.srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), adminKey), chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("model-sim-1")))
	smokeRow, pickyRow := `tr[id="eval-sim-1/sim-smoke"]`, `tr[id="eval-sim-1/sim-picky"]`
	do("the overview's eval panel", chromedp.Navigate(e.srv.URL+"/ui/?window=15m"), chromedp.WaitVisible(chromedp.CSS(pickyRow)))
	heading := text(`#model-sim-1 h3[id="evals-sim-1/sim"]`)
	smoke, picky := text(smokeRow), text(pickyRow)
	failingIDs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('tr[id="eval-sim-1/sim-picky"] code.case')].map(c => c.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	otherPanels := count(`#model-liar-1 table.evals, #model-fallback-1 table.evals`)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(shots, "overview-evals.png"), png, 0o644)

	do("eval events", chromedp.Navigate(e.srv.URL+"/ui/events?type=eval"), chromedp.WaitVisible(chromedp.CSS("table.events")))
	events := text("table.events tbody")
	evalOption := count(`#type option[value="eval"]`)
	selected, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#type").value`))
	if err != nil {
		t.Fatal(err)
	}

	if !strings.Contains(strings.ToLower(heading), "evaluation suites on sim-1/sim") {
		t.Errorf("the panel's heading: %q", heading)
	}
	for _, want := range []string{"smoke", "(demand)", "path sim / sim-1 / fp_", "passed 1/1", "threshold 1.00", "none", "recorded 20", "on sim / sim-1 / fp_", "0 regressed, 0 changed", "summaries", "usable: its current path passed", "ledger leaf"} {
		if !strings.Contains(smoke, want) {
			t.Errorf("the passing suite's row lacks %q: %q", want, smoke)
		}
	}
	for _, want := range []string{"picky", "(demand)", "failed 0/1", "never-said", "equals", "none yet", "no policy", "not passed"} {
		if !strings.Contains(picky, want) {
			t.Errorf("the failing suite's row lacks %q: %q", want, picky)
		}
	}
	if strings.Join(failingIDs, ",") != "never-said" {
		t.Errorf("failing cases by id: %q, want never-said", failingIDs)
	}
	if otherPanels != 0 {
		t.Errorf("%d eval panels on cards of models no suite covers", otherPanels)
	}
	if evalOption != 1 || selected != "eval" {
		t.Errorf("the events filter: %d eval options, %q selected", evalOption, selected)
	}
	for _, want := range []string{"suite=smoke", "suite=picky", "failing=never-said", "sim-1/sim"} {
		if !strings.Contains(events, want) {
			t.Errorf("eval events lack %q:\n%s", want, events)
		}
	}
	// The client traffic met sim-1/sim's path first (a path change), so
	// both suites ran on it, then on demand: four runs, four events.
	if runs := count(`table.events tbody tr.ev-eval`); runs != 4 || count(`table.events tbody tr`) != 4 || !strings.Contains(events, "trigger=path_change") {
		t.Errorf("%d eval events, want 4 (a path change and a demand, each suite):\n%s", runs, events)
	}
	if count(`table.events .kind.failed`) != 2 || count(`table.events .kind.passed`) != 2 {
		t.Errorf("eval events do not show their outcome as the kind:\n%s", events)
	}
	if d := os.Getenv("CUSTODY_SHOTS"); d != "" {
		os.CopyFS(d, os.DirFS(shots))
	}
}
