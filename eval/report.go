package eval

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Trigger says why a run happened.
type Trigger string

const (
	TriggerStart      Trigger = "start"       // serve started, or the config was reloaded
	TriggerPathChange Trigger = "path_change" // a covered route served from a new tuple
	TriggerInterval   Trigger = "interval"    // the suite's schedule
	TriggerDemand     Trigger = "demand"      // custody eval, or the admin API
	TriggerRetry      Trigger = "retry"       // a failed run, again after a backoff
)

// Path is the execution path a run saw: the provider and what the
// upstream reported (model, system_fingerprint) on the run's answers.
type Path struct {
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	Fingerprint string `json:"fingerprint"`
}

func (p Path) String() string {
	fp := p.Fingerprint
	if fp == "" {
		fp = "-"
	}
	m := p.Model
	if m == "" {
		m = "-"
	}
	return p.Provider + "|" + m + "|" + fp
}

// CaseResult is one case's outcome in a run. Reason names the assertion
// that failed, never answer text; Digest is the outcome digest.
type CaseResult struct {
	ID     string
	Pass   bool
	Reason string
	Status int
	Code   string // custody's rejection code
	// Contract is the contract check's finding on the answer: "ok", the
	// broken clause's code, "" when it did not judge it.
	Contract string
	Latency  time.Duration
	Digest   string
}

// BaselineRef is the baseline a run was compared with.
type BaselineRef struct {
	Time   time.Time `json:"time"`
	Path   Path      `json:"path"`
	Pinned bool      `json:"pinned"` // by custody eval --pin
	// Recorded: this run recorded it (the first passing run, or a pin).
	Recorded bool `json:"recorded"`
}

// Report is one run of one suite on one route. It is not a wire format:
// the admin API shows it in its own style (snake_case, durations in
// milliseconds, lists never null; gateway/evals.go), so it has no JSON
// tags that could drift from that.
type Report struct {
	Suite       string
	SuiteDigest string // hex SHA-256 of the suite file
	Route       string // MODEL/PROVIDER
	Model       string
	Index       int
	Path        Path
	Trigger     Trigger
	Time        time.Time
	Duration    time.Duration
	Cases       []CaseResult
	Passed      int
	Total       int
	Ratio       float64
	Threshold   float64
	OK          bool // Ratio reached Threshold, on one path
	// PathMoved: the run's answers came from more than one path (the
	// route moved while it ran). Such a run does not pass, whatever its
	// ratio, and is followed by another on the new path.
	PathMoved bool
	// The cost of the run, as the upstream reported it.
	PromptTokens     int
	CompletionTokens int
	// Baseline is nil when there is none for this suite version.
	Baseline *BaselineRef
	// Regressions: cases that passed at the baseline and fail now.
	Regressions []string
	// Changed: cases whose outcome digest differs from the baseline's
	// (the answer changed, even where both pass).
	Changed []string
	// LedgerID is the request id of the run's ledger leaf, once recorded.
	LedgerID string
	// Contract is the run's answers held to their requests' contract,
	// and the pass rate the suite requires of them (contract.go).
	Contract ContractTally
}

// Failing is the ids of the cases that failed.
func (r *Report) Failing() []string {
	var out []string
	for _, c := range r.Cases {
		if !c.Pass {
			out = append(out, c.ID)
		}
	}
	return out
}

// AllOK reports whether every run reached its threshold.
func AllOK(reps []Report) bool {
	for _, r := range reps {
		if !r.OK {
			return false
		}
	}
	return true
}

// PrintTable writes the reports as custody eval prints them: one row a
// run, then each failing case with its reason.
func PrintTable(w io.Writer, reps []Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tROUTE\tRESULT\tPASSED\tTHRESHOLD\tTOKENS\tPATH\tBASELINE")
	for _, r := range reps {
		result := "PASS"
		if !r.OK {
			result = "FAIL"
		}
		base := "none"
		if b := r.Baseline; b != nil {
			switch {
			case b.Recorded && b.Pinned:
				base = "pinned now"
			case b.Recorded:
				base = "recorded now"
			default:
				base = fmt.Sprintf("%s, %d regressed, %d changed", b.Time.UTC().Format(time.RFC3339), len(r.Regressions), len(r.Changed))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%.2f\t%d\t%s\t%s\n", r.Suite, r.Route, result, r.Passed, r.Total, r.Threshold,
			r.PromptTokens+r.CompletionTokens, r.Path, base)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range reps {
		if r.PathMoved {
			fmt.Fprintf(&b, "  %s %s: the path moved during the run (it does not count; the suite runs again on the new path)\n", r.Suite, r.Route)
		}
		if why := r.ContractReason(); why != "" {
			fmt.Fprintf(&b, "  %s %s: %s\n", r.Suite, r.Route, why)
		}
		for _, c := range r.Cases {
			if !c.Pass {
				fmt.Fprintf(&b, "  %s %s: case %s failed: %s\n", r.Suite, r.Route, c.ID, c.Reason)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
