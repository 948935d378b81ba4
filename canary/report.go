package canary

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is one run of a route's probes.
type Report struct {
	Model   string
	Route   int
	Name    string
	Time    time.Time
	Results []ProbeResult
	// Health is the route's health after this run.
	Health Health
}

// OK reports whether no probe failed: skipped and inconclusive probes do
// not fail a run.
func (r Report) OK() bool {
	for _, res := range r.Results {
		if res.Outcome() == StatusFailed {
			return false
		}
	}
	return true
}

// okExcept is OK ignoring the results of probe.
func (r Report) okExcept(probe string) bool {
	for _, res := range r.Results {
		if res.Probe != probe && res.Outcome() == StatusFailed {
			return false
		}
	}
	return true
}

// Conclusive reports whether the run reached a verdict on every probe
// that ran: a run with an inconclusive probe and no failure neither passes
// nor fails the route (its health stays as it was).
func (r Report) Conclusive() bool {
	for _, res := range r.Results {
		if res.Outcome() == StatusInconclusive {
			return false
		}
	}
	return true
}

// AllOK reports whether no probe of any report failed (`custody canary`
// exits 1 otherwise): skipped and inconclusive rows do not fail it.
func AllOK(reports []Report) bool {
	for _, r := range reports {
		if !r.OK() {
			return false
		}
	}
	return true
}

// PrintTable writes one line per probe of every report:
//
//	ROUTE      PROBE     RESULT  TIME   EVIDENCE
//	sim-1/sim  echo      ok      3ms    nonce k9XbQ2mZ7w returned
func PrintTable(w io.Writer, reports []Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUTE\tPROBE\tRESULT\tTIME\tEVIDENCE")
	for _, rep := range reports {
		for _, res := range rep.Results {
			result := string(res.Outcome())
			if res.Outcome() == StatusFailed {
				result = "FAIL"
				if res.Code != "" {
					result += " " + res.Code
				}
			}
			ev := strings.Map(func(r rune) rune {
				if r == '\t' || r == '\n' || r == '\r' {
					return ' '
				}
				return r
			}, res.Evidence)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", rep.Name, res.Probe, result, res.Duration.Round(time.Millisecond), ev)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("printing canary table: %w", err)
	}
	return nil
}
