package eval

import (
	"strings"
	"testing"
	"time"
)

// TestPrintTable: one row a run, failing cases listed by id and reason.
func TestPrintTable(t *testing.T) {
	var b strings.Builder
	reps := []Report{
		{Suite: "support", Route: "m/p", OK: true, Passed: 3, Total: 3, Threshold: 1, PromptTokens: 30, CompletionTokens: 6,
			Path: Path{"p", "m-0827", "fp1"}, Baseline: &BaselineRef{Recorded: true}},
		{Suite: "support", Route: "m/q", Passed: 1, Total: 2, PathMoved: true, Threshold: 1, Path: Path{Provider: "q"},
			Baseline: &BaselineRef{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, Regressions: []string{"two"}, Changed: []string{"two"},
			Cases: []CaseResult{{ID: "one", Pass: true}, {ID: "two", Reason: "contains[0] missing"}}},
	}
	if err := PrintTable(&b, reps); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"SUITE", "support  m/p    PASS    3/3", "36", "p|m-0827|fp1", "recorded now",
		"FAIL    1/2", "q|-|-", "2026-01-02T03:04:05Z, 1 regressed, 1 changed", "support m/q: case two failed: contains[0] missing", "support m/q: the path moved during the run"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if AllOK(reps) || !AllOK(reps[:1]) {
		t.Error("AllOK")
	}
}
