package eval

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/custody-gateway/custody"
)

// Check names of an eval leaf's outcomes: the run, then each case.
const (
	CheckEval     = "eval"
	CheckEvalCase = "eval_case"
)

// Transaction is the run's leaf as the gateway records it
// (gateway.Gateway.RecordEval, which adds the id, time, tenant and the
// route's upstream model and region): the suite's digest, the route, the
// path tuple the run saw, the pass count and every case's outcome digest,
// no case or answer text.
func (rep Report) Transaction() *custody.Transaction {
	tx := &custody.Transaction{Endpoint: custody.EndpointEval,
		RequestedModel: rep.Model, Provider: rep.Path.Provider, ResponseModel: custody.Bound(rep.Path.Model), Fingerprint: custody.Bound(rep.Path.Fingerprint),
		Route: rep.Index, Policy: "eval", Decision: "failed", Status: http.StatusOK,
		PromptTokensLocal: -1, PromptTokensReported: rep.PromptTokens, CompletionTokens: rep.CompletionTokens, Duration: rep.Duration}
	// A failing run is an alarm on the route, not a refused request: its
	// outcomes are flagged, so Conclude makes the leaf flagged.
	status := custody.StatusFlagged
	if rep.OK {
		tx.Decision, status = "passed", custody.StatusOK
	}
	tx.Outcomes = append(tx.Outcomes, custody.Outcome{Check: CheckEval, Status: status, Detail: rep.detail()})
	for _, c := range rep.Cases {
		o := custody.Outcome{Check: CheckEvalCase, Status: custody.StatusOK, Detail: c.ID + " " + c.Digest}
		if !c.Pass {
			o.Status, o.Code = custody.StatusFlagged, custody.Code(c.Code)
		}
		tx.Outcomes = append(tx.Outcomes, o)
	}
	return tx
}

// detail is the run's outcome detail, as the leaf and the event say it:
// suite, its digest, the count, the threshold, why it ran, the baseline,
// the contract pass count when the suite requires a rate (and the broken
// clauses' codes) and the failing cases by id.
func (rep Report) detail() string {
	base := "none"
	if b := rep.Baseline; b != nil {
		base = b.Time.UTC().Format("2006-01-02T15:04:05Z")
		if b.Recorded {
			base = "recorded"
		}
	}
	d := fmt.Sprintf("suite=%s sha256=%s passed=%d/%d threshold=%.2f trigger=%s baseline=%s regressed=%d",
		rep.Suite, rep.SuiteDigest, rep.Passed, rep.Total, rep.Threshold, rep.Trigger, base, len(rep.Regressions))
	if rep.PathMoved {
		d += " path_moved=true"
	}
	if c := rep.Contract; c.Required > 0 {
		d += fmt.Sprintf(" contract=%d/%d contract_pass_rate=%g", c.Passed, c.Checked, c.Required)
		if b := c.BrokenList(); len(b) > 0 {
			d += " contract_broken=" + strings.Join(b, ",")
		}
	}
	if f := rep.Failing(); len(f) > 0 {
		if len(f) > 20 {
			f = append(f[:20:20], "…")
		}
		d += " failing=" + strings.Join(f, ",")
	}
	return d
}
