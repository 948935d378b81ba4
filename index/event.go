package index

import (
	"strings"
	"time"

	"github.com/custody-gateway/custody"
)

// Event types of the timeline (docs/endpoints.md, /v1/custody/events?type=).
const (
	EventFallback   = "fallback"    // a request was served by a route other than the first
	EventPathChange = "path_change" // first sighting of a (provider, model, fingerprint)
	EventViolation  = "violation"   // an integrity check failed or flagged
	EventCanary     = "canary"      // a canary probe's result changed
	EventEval       = "eval"        // an evaluation suite ran on a route
	EventContract   = "contract"    // a route's contract pass rate dropped or recovered
)

// Event is one entry of the timeline: the domain's type (custody.Event),
// which the webhooks (notify) send without importing the index.
type Event = custody.Event

// CanaryEvent is the timeline's entry for a canary event of kind (a
// canary.EventKind) on route ("model/provider"): the route in its own
// column, the provider in its, and a detail that reads "kind: probes:
// evidence" without saying a probe's name twice when the evidence
// already names it ("needle: nonce missing", not "needle needle: ...").
func CanaryEvent(at time.Time, kind, model, route, probe, detail string) Event {
	parts := []string{kind}
	if probe != "" && !strings.HasPrefix(detail, probe+":") && !strings.HasPrefix(detail, probe+" ") {
		parts = append(parts, probe)
	}
	if detail != "" {
		parts = append(parts, detail)
	}
	return Event{Time: at, Type: EventCanary, Model: model, Route: route,
		Provider: strings.TrimPrefix(route, model+"/"), Detail: strings.Join(parts, ": ")}
}
