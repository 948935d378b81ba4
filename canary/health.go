package canary

import "time"

// Health is a route's canary health.
type Health string

const (
	// Green: the last conclusive run failed no probe (and the route is not
	// quarantined). Skipped probes never count; a run with an inconclusive
	// probe and no failure leaves the health as it was.
	Green Health = "green"
	// Amber: a probe failed, fewer than FailRuns runs in a row.
	Amber Health = "amber"
	// Red: FailRuns runs in a row failed; the route is quarantined until
	// PassRuns runs in a row pass.
	Red Health = "red"
)

// EventKind names a canary event (the `canary` events of the timeline).
type EventKind string

const (
	EventFailure     EventKind = "canary_failure"     // a run of a route failed a probe
	EventQuarantined EventKind = "canary_quarantined" // the route went red
	EventRecovered   EventKind = "canary_recovered"   // a red route passed PassRuns runs
	EventEnrolled    EventKind = "canary_enrolled"    // first identity enrollment of a route
	EventReenrolled  EventKind = "canary_reenrolled"  // explicit re-enrollment (Reenroll)
)

// Event is something the operator's timeline must show.
type Event struct {
	Time  time.Time
	Kind  EventKind
	Model string
	Route int
	Name  string // the route label, e.g. "sim-1/sim"
	// Probe names the failing probes of an EventFailure, comma-separated.
	Probe string
	// Detail is evidence (numbers and ids, no prompt text).
	Detail string
}

// healthState is one route's run streaks.
type healthState struct {
	health   Health
	failRuns int // consecutive failing runs
	passRuns int // consecutive passing runs
	// out is since when and why the route is red; zero while it is not.
	out Quarantine
}

// Quarantine says since when and why canaries took a route out of
// service: the run that made it red, its failing probes with their
// evidence, and the streak.
type Quarantine struct {
	Since  time.Time
	Reason string
}

// observe folds one run into the state and returns the new health.
// failN failing runs in a row make it red; passN passing runs in a row
// bring a red route back to green. A passing run turns amber green at once.
func (h *healthState) observe(ok bool, failN, passN int) Health {
	if ok {
		h.failRuns, h.passRuns = 0, h.passRuns+1
		if h.health != Red || h.passRuns >= passN {
			h.health = Green
		}
		return h.health
	}
	h.failRuns, h.passRuns = h.failRuns+1, 0
	switch {
	case h.failRuns >= failN:
		h.health = Red
	case h.health != Red:
		h.health = Amber
	}
	return h.health
}
