package canary

import (
	"errors"
	"fmt"
)

// Warning is a probe that cannot run on a route, found before any run:
// custody logs each at start. The probe reports StatusSkipped with the same
// reason on every run.
type Warning struct {
	Route  string // the route label, e.g. "sim-1/sim"
	Probe  string
	Reason string
}

func (w Warning) String() string {
	return fmt.Sprintf("canary probe %s skipped on route %s: %s", w.Probe, w.Route, w.Reason)
}

// Plan returns a Warning for every configured probe that cannot run on
// one of the Runner's routes, in route and probe order.
func (r *Runner) Plan() []Warning {
	var out []Warning
	for _, rt := range r.routes {
		for _, p := range r.probes {
			if why := r.cannotRun(p, rt.t); why != "" {
				out = append(out, Warning{Route: rt.t.Name(), Probe: p, Reason: why})
			}
		}
	}
	return out
}

// needleTooSmall is the reason the needle probe cannot run on t, whose
// instruction and needles take tokens.
func (r *Runner) needleTooSmall(t Target, tokens int) string {
	return fmt.Sprintf("its prompt must stay within %.0f%% of capacity %d (%d tokens), but the instruction and %d needles alone take about %d",
		100*r.cfg.NeedleFraction, t.Capacity(), r.needleBudget(t), len(r.cfg.NeedleDepths), tokens)
}

// cannotRun says why probe cannot run on t, or "" when it can. It depends
// only on the configuration and the route's capacity, so the warning at
// start and the skipped results agree.
func (r *Runner) cannotRun(probe string, t Target) string {
	capacity := t.Capacity()
	switch probe {
	case ProbeNeedle:
		if capacity <= 0 {
			return "the route has no known capacity (set the model's context_window)"
		}
		// A typical nonce: the probe's own are random, and one run may
		// find its needles a token or two longer (it skips then too).
		needles := make([]string, len(r.cfg.NeedleDepths))
		for i := range needles {
			needles[i] = "k9XbQ2mZ7w"
		}
		if _, tokens, err := haystack(r.counterFor(t), r.needleBudget(t), needleHead, needles, r.cfg.NeedleDepths); errors.Is(err, errTooSmall) {
			return r.needleTooSmall(t, tokens)
		}
	case ProbeOversize:
		if capacity <= 0 {
			return "the route has no known capacity to go over (set the model's context_window)"
		}
	case ProbeCache:
		if need := r.cfg.Cache.PrefixTokens + 64; capacity > 0 && capacity < need {
			return fmt.Sprintf("capacity %d is below the %d tokens of its prompt", capacity, need)
		}
	case ProbeIdentity:
		if need := identityTokens(r.counterFor(t), r.cfg.Identity.MaxTokens); capacity > 0 && capacity < need {
			return fmt.Sprintf("capacity %d is below the %d tokens an identity sample needs, so no enrollment can be taken", capacity, need)
		}
	}
	return ""
}
