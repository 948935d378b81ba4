package index

import (
	"fmt"
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
)

// Event is one entry of the timeline. Detail holds numbers, ids and model
// names only, never prompt or response text.
type Event struct {
	ID        int64        `json:"id"` // assigned by the index, increasing
	Time      time.Time    `json:"time"`
	Type      string       `json:"type"`
	RequestID string       `json:"request_id"` // "" for events of no one request (canary, path_change seen first by a probe)
	Tenant    string       `json:"tenant"`
	Model     string       `json:"model"`    // the client-facing model
	Provider  string       `json:"provider"` // the provider (config name) concerned
	Route     string       `json:"route"`    // the route label "model/provider" of canary events
	Code      custody.Code `json:"code"`
	Detail    string       `json:"detail"`
}

// Validate reports whether e can be stored.
func (e *Event) Validate() error {
	if e.Type == "" {
		return fmt.Errorf("index: event without type: %w", custody.ErrInvalidRequest)
	}
	return nil
}

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
