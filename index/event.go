package index

import (
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
)

// Event types of the timeline (SPEC §2, /v1/custody/events?type=).
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
	ID        int64 // assigned by the index, increasing
	Time      time.Time
	Type      string
	RequestID string
	Tenant    string
	Model     string
	Provider  string
	Code      custody.Code
	Detail    string
}

// Validate reports whether e can be stored.
func (e *Event) Validate() error {
	if e.Type == "" {
		return fmt.Errorf("index: event without type: %w", custody.ErrInvalidRequest)
	}
	return nil
}
