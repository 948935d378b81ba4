package custody

import (
	"fmt"
	"time"
)

// Event is one entry of the timeline (docs/endpoints.md,
// /v1/custody/events): what the index stores and the webhooks send.
// Detail holds numbers, ids and model names only, never prompt or
// response text.
type Event struct {
	ID        int64     `json:"id"` // assigned by the index, increasing
	Time      time.Time `json:"time"`
	Type      string    `json:"type"`
	RequestID string    `json:"request_id"` // "" for events of no one request (canary, path_change seen first by a probe)
	Tenant    string    `json:"tenant"`
	Model     string    `json:"model"`    // the client-facing model
	Provider  string    `json:"provider"` // the provider (config name) concerned
	Route     string    `json:"route"`    // the route label "model/provider" of canary events
	Code      Code      `json:"code"`
	Detail    string    `json:"detail"`
}

// Validate reports whether e can be stored.
func (e *Event) Validate() error {
	if e.Type == "" {
		return fmt.Errorf("custody: event without type: %w", ErrInvalidRequest)
	}
	return nil
}
