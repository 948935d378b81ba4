package index

import (
	"time"

	"github.com/custody-gateway/custody"
)

// Page sizes of Search and Events.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Query selects records. Zero fields match everything; set fields must all
// match.
type Query struct {
	RequestID string
	Tenant    string
	// Model matches the effective (response) model or the requested model.
	Model    string
	Provider string
	Verdict  custody.Verdict
	// Sender matches the records of one sender (Transaction.From): a
	// client's, a canary probe's, an eval's. A record written before
	// leaf version 3 reads as canary traffic when it is synthetic,
	// eval's included. Another value matches nothing.
	Sender custody.Sender
	// Code matches a record whose transaction code, or one of whose failed
	// or flagged outcomes, has this code (see Codes).
	Code custody.Code
	// Since is inclusive, Until exclusive; zero means unbounded.
	Since, Until time.Time
	// Limit is the page size: DefaultLimit when <= 0, at most MaxLimit.
	Limit int
	// Before is a cursor: the request id of the last record of the
	// previous page; the page holds the records after it in newest-first
	// order. An unknown cursor is an error wrapping ErrNotFound.
	Before string
}

// PageSize is the Limit as the backends apply it.
func (q *Query) PageSize() int { return clamp(q.Limit) }

// EventQuery selects events.
type EventQuery struct {
	Type   string       // one of the Event* types; empty matches every type
	Model  string       // empty matches every model
	Tenant string       // empty matches every tenant
	Route  string       // a route label "model/provider"; empty matches every route
	Code   custody.Code // empty matches every code
	// Since is inclusive, Until exclusive; zero means unbounded.
	Since, Until time.Time
	Limit        int // as Query.Limit
	// Before is a cursor: the ID of the last event of the previous page;
	// the page holds the events after it in newest-first order. An
	// unknown cursor is an error wrapping ErrNotFound.
	Before int64
}

// PageSize is the Limit as the backends apply it.
func (q *EventQuery) PageSize() int { return clamp(q.Limit) }

func clamp(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}
