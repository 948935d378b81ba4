package console

import (
	"fmt"
	"github.com/custody-gateway/custody/adminapi"
	"time"
)

// evalPanel is one route's evaluation suites on the overview: the last
// run of each, its baseline, the failing cases by id, and the policies
// that require the suite (and so do not use the route while its current
// path has not passed it).
type evalPanel struct {
	Route  string
	Suites []evalLine
}

type evalLine struct {
	Suite      string
	Qualified  bool     // the route's current path passed the suite: require_evals lets policies use it
	RequiredBy []string // policies
	Ran        bool     // a run exists; the fields below describe it
	OK         bool
	Time       time.Time
	Trigger    string
	Passed     int
	Total      int
	Threshold  float64
	Path       string
	PathMoved  bool
	Baseline   string
	Failing    []failingCase
	Tokens     int
	LedgerID   string
}

type failingCase struct {
	ID, Reason string
	Regressed  bool // it passed at the baseline
}

// attachEvals puts each route's suites on its model's card, in the API's
// order. Routes without suites, and models that get no card, show none.
func attachEvals(d *overviewData, routes []adminapi.EvalRoute) {
	for _, rt := range routes {
		if len(rt.Suites) == 0 {
			continue
		}
		var card *modelCard
		for _, m := range d.Models {
			if m.Name == rt.Model {
				card = m
			}
		}
		if card == nil {
			continue
		}
		p := &evalPanel{Route: rt.Route}
		for _, s := range rt.Suites {
			p.Suites = append(p.Suites, evalLineOf(s.Suite, s.Passed, s.RequiredBy, s.Last))
		}
		card.Evals = append(card.Evals, p)
	}
}

func evalLineOf(suite string, qualified bool, requiredBy []string, r *adminapi.EvalReport) evalLine {
	l := evalLine{Suite: suite, Qualified: qualified, RequiredBy: requiredBy}
	if r == nil {
		return l
	}
	l.Ran, l.OK, l.Time, l.Trigger = true, r.OK, r.Time, string(r.Trigger)
	l.Passed, l.Total, l.Threshold = r.Passed, r.Total, r.Threshold
	l.Path, l.PathMoved = pathString(r.Path), r.PathMoved
	l.Tokens, l.LedgerID = r.PromptTokens+r.CompletionTokens, r.LedgerID
	regressed := map[string]bool{}
	for _, id := range r.Regressions {
		regressed[id] = true
	}
	for _, c := range r.Cases {
		if !c.Pass {
			l.Failing = append(l.Failing, failingCase{ID: c.ID, Reason: c.Reason, Regressed: regressed[c.ID]})
		}
	}
	switch b := r.Baseline; {
	case b == nil:
		l.Baseline = "none yet (the first passing run records it)"
	case b.Recorded && b.Pinned:
		l.Baseline = "pinned by this run"
	case b.Recorded:
		l.Baseline = "recorded by this run"
	default:
		how := "recorded"
		if b.Pinned {
			how = "pinned"
		}
		l.Baseline = fmt.Sprintf("%s %s on %s; %d regressed, %d changed", how, b.Time.UTC().Format("2006-01-02 15:04:05Z"),
			pathString(b.Path), len(r.Regressions), len(r.Changed))
	}
	return l
}
