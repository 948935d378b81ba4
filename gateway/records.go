package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// records answers GET /v1/custody/records: a page of records, newest
// first; next_before is the cursor of the next page, null on the last.
func (e *Evidence) records(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	q := r.URL.Query()
	query := index.Query{RequestID: q.Get("request_id"), Tenant: q.Get("tenant"), Model: q.Get("model"),
		Provider: q.Get("provider"), Verdict: custody.Verdict(q.Get("verdict")), Code: custody.Code(q.Get("code")),
		Before: q.Get("before")}
	var err error
	if query.Since, err = timeParam(q.Get("since"), "since"); err != nil {
		return err
	}
	if query.Until, err = timeParam(q.Get("until"), "until"); err != nil {
		return err
	}
	if query.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	recs, err := e.Index.Search(r.Context(), query)
	if errors.Is(err, index.ErrNotFound) {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "before", Message: "before names no record"}
	}
	if err != nil {
		return indexDown(err)
	}
	out := make([]json.RawMessage, len(recs))
	for i := range recs {
		if out[i], err = recordJSON(&recs[i]); err != nil {
			return err
		}
	}
	var next *string
	if len(recs) == query.PageSize() {
		next = &recs[len(recs)-1].ID
	}
	return writeJSON(w, map[string]any{"object": "list", "data": out, "next_before": next})
}

// recordJSON is a record as the admin API shows it: the transaction's
// ledger fields, its place in the log, and its duration in milliseconds
// (the leaf's duration_ns is the ledger's format, not the API's).
func recordJSON(rec *index.Record) (json.RawMessage, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "duration_ns")
	m["duration_ms"], _ = json.Marshal(ms(rec.Duration))
	return json.Marshal(m)
}

// ms is d in milliseconds, the admin API's unit of durations.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// events answers GET /v1/custody/events: a page of the timeline, newest
// first; next_before is the cursor of the next page, null on the last.
func (e *Evidence) events(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	q := r.URL.Query()
	eq := index.EventQuery{Type: q.Get("type"), Model: q.Get("model"), Tenant: q.Get("tenant"), Route: q.Get("route"),
		Code: custody.Code(q.Get("code"))}
	switch eq.Type {
	case "", "fallback", "path_change", "violation", "canary", "eval":
	default:
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "type", Message: "type must be fallback, path_change, violation, canary or eval"}
	}
	var err error
	if eq.Since, err = timeParam(q.Get("since"), "since"); err != nil {
		return err
	}
	if eq.Until, err = timeParam(q.Get("until"), "until"); err != nil {
		return err
	}
	if eq.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	before, err := intParam(q.Get("before"), "before")
	if err != nil {
		return err
	}
	eq.Before = int64(before)
	evs, err := e.Index.Events(r.Context(), eq)
	if errors.Is(err, index.ErrNotFound) {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "before", Message: "before names no event"}
	}
	if err != nil {
		return indexDown(err)
	}
	if evs == nil {
		evs = []index.Event{}
	}
	var next *int64
	if len(evs) == eq.PageSize() {
		next = &evs[len(evs)-1].ID
	}
	return writeJSON(w, map[string]any{"object": "list", "data": evs, "next_before": next})
}
