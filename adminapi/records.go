package adminapi

import (
	"errors"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// records answers GET /v1/custody/records: a page of records, newest
// first; next_before is the cursor of the next page, null on the last.
func (a *API) records(c *call) error {
	q := c.r.URL.Query()
	query := index.Query{RequestID: q.Get("request_id"), Tenant: q.Get("tenant"), Model: q.Get("model"),
		Provider: q.Get("provider"), Verdict: custody.Verdict(q.Get("verdict")), Code: custody.Code(q.Get("code")),
		Sender: custody.Sender(q.Get("sender")), Before: q.Get("before")}
	switch query.Sender {
	case "", custody.SenderClient, custody.SenderCanary, custody.SenderEval:
	default:
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "sender", Message: "sender must be client, canary or eval"}
	}
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
	recs, err := a.cfg.Index.Search(c.r.Context(), query)
	if errors.Is(err, index.ErrNotFound) {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "before", Message: "before names no record"}
	}
	if err != nil {
		return indexDown(err)
	}
	out := RecordList{Object: "list", Data: make([]Record, len(recs))}
	for i := range recs {
		out.Data[i] = Record{Record: recs[i], DurationMS: ms(recs[i].Duration)}
	}
	if len(recs) == query.PageSize() {
		out.NextBefore = &recs[len(recs)-1].ID
	}
	return c.json(out)
}

// events answers GET /v1/custody/events: a page of the timeline, newest
// first; next_before is the cursor of the next page, null on the last.
func (a *API) events(c *call) error {
	q := c.r.URL.Query()
	eq := index.EventQuery{Type: q.Get("type"), Model: q.Get("model"), Tenant: q.Get("tenant"), Route: q.Get("route"),
		Code: custody.Code(q.Get("code"))}
	switch eq.Type {
	case "", "fallback", "path_change", "violation", "canary", "eval", "contract":
	default:
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "type", Message: "type must be fallback, path_change, violation, canary, eval or contract"}
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
	evs, err := a.cfg.Index.Events(c.r.Context(), eq)
	if errors.Is(err, index.ErrNotFound) {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "before", Message: "before names no event"}
	}
	if err != nil {
		return indexDown(err)
	}
	out := EventList{Object: "list", Data: evs}
	if out.Data == nil {
		out.Data = []index.Event{}
	}
	if len(evs) == eq.PageSize() {
		out.NextBefore = &evs[len(evs)-1].ID
	}
	return c.json(out)
}
