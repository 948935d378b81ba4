package eval

import (
	"context"
	"strings"
	"testing"
)

// contractTarget answers like fakeTarget, and reports the contract
// check's finding on each answer from contract(n) (call n, 1-based).
type contractTarget struct {
	fakeTarget
	contract func(n int64) string
}

func (c *contractTarget) Chat(ctx context.Context, req Request) (Result, error) {
	res, err := c.fakeTarget.Chat(ctx, req)
	res.Contract = c.contract(c.calls.Load())
	return res, err
}

// TestContractPassRate: a suite that requires a contract pass rate fails
// a run whose answers fall below it, with a reason naming the broken
// clauses' codes, in the report, the leaf's detail and the table, even
// though every case's assertion passed; at or above it, and without a
// requirement, the same run passes.
func TestContractPassRate(t *testing.T) {
	oneBroken := func(n int64) string {
		if n == 2 {
			return "contract_tool_unknown"
		}
		return "ok"
	}
	for _, tc := range []struct {
		name     string
		required float64
		contract func(int64) string
		ok       bool
	}{
		{"no requirement", 0, oneBroken, true},
		{"below the rate", 0.99, oneBroken, false},
		{"at the rate", 0.66, oneBroken, true},
		{"every answer honoured", 1, func(int64) string { return "ok" }, true},
		{"no answer judged", 0.5, func(int64) string { return "" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &contractTarget{fakeTarget: fakeTarget{name: "m/p"}, contract: tc.contract}
			tg.set("m-0827", echo)
			s := testSuite(t, 1)
			s.ContractPassRate = tc.required
			r := newTestRunner(t, Config{Suites: []*Suite{s}, Routes: []Route{{Model: "m", Index: 0, Target: tg}}, Dir: t.TempDir()})
			reps, err := r.RunOnce(t.Context(), RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rep := reps[0]
			if rep.Passed != 3 {
				t.Fatalf("cases passed %d, want 3", rep.Passed)
			}
			if rep.OK != tc.ok {
				t.Fatalf("ok %v, want %v: %q", rep.OK, tc.ok, rep.ContractReason())
			}
			if tc.ok {
				return
			}
			why := rep.ContractReason()
			var table strings.Builder
			if err := PrintTable(&table, reps); err != nil {
				t.Fatal(err)
			}
			if tc.required == 0.99 {
				if why != "contract pass rate 0.67 (2/3) below 0.99: broken contract_tool_unknown=1" {
					t.Errorf("reason %q", why)
				}
				if d := rep.detail(); !strings.Contains(d, "contract=2/3 contract_pass_rate=0.99 contract_broken=contract_tool_unknown=1") {
					t.Errorf("detail %q", d)
				}
			}
			if why == "" || !strings.Contains(table.String(), why) || !strings.Contains(table.String(), "FAIL") {
				t.Errorf("the table does not say why:\n%s", table.String())
			}
			if tx := rep.Transaction(); tx.Decision != "failed" {
				t.Errorf("leaf decision %q", tx.Decision)
			}
		})
	}
}
