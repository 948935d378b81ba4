package console

import (
	"context"
	"errors"
	"github.com/custody-gateway/custody/adminapi"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/custody-gateway/custody/index"
)

// eventTypes are the timeline's filters, in the order shown.
var eventTypes = []string{index.EventViolation, index.EventFallback, index.EventPathChange, index.EventCanary, index.EventEval, index.EventContract}

type eventsData struct {
	Type, Model, Route, Code string
	Types                    []string
	Events                   []eventRow
	// Older is the query of the next page, "" on the last; Newer is set
	// when this page is not the first.
	Older, Newer string
}

// eventRow is an event as the page reads it: the route in its column,
// the provider in its, and a detail in words.
type eventRow struct {
	index.Event
	RouteLabel string
	Kind       string // canary events: failure, quarantined, recovered, enrolled, reenrolled; eval events: passed, failed; contract events: dropped, recovered
	Before     string // path changes: the path before, "" when first seen
	After      string // path changes: the new path
	Text       string // the detail otherwise
}

func (c *Console) events(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	d := eventsData{Type: q.Get("type"), Model: strings.TrimSpace(q.Get("model")), Route: strings.TrimSpace(q.Get("route")),
		Code: strings.TrimSpace(q.Get("code")), Types: eventTypes}
	if d.Type != "" && !slices.Contains(eventTypes, d.Type) {
		return &httpError{status: http.StatusBadRequest, msg: "unknown event type"}
	}
	filter := url.Values{}
	for k, v := range map[string]string{"type": d.Type, "model": d.Model, "route": d.Route, "code": d.Code} {
		if v != "" {
			filter.Set(k, v)
		}
	}
	api := url.Values{"limit": {strconv.Itoa(c.cfg.EventsPage)}}
	for k, v := range filter {
		api[k] = v
	}
	if b := q.Get("before"); b != "" {
		api.Set("before", b)
		d.Newer = "?" + filter.Encode()
	}
	var page adminapi.EventList
	err := c.call(r.Context(), adminapi.PathEvents, api, &page)
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusBadRequest {
		return &httpError{status: http.StatusBadRequest, msg: ae.message}
	}
	if err != nil {
		return err
	}
	for _, e := range page.Data {
		d.Events = append(d.Events, c.eventRow(r.Context(), e))
	}
	if page.NextBefore != nil {
		older := url.Values{"before": {strconv.FormatInt(*page.NextBefore, 10)}}
		for k, v := range filter {
			older[k] = v
		}
		d.Older = "?" + older.Encode()
	}
	return c.render(w, r, http.StatusOK, "events", d)
}

func (c *Console) eventRow(ctx context.Context, e index.Event) eventRow {
	row := eventRow{Event: e, RouteLabel: e.Route, Text: e.Detail}
	if row.RouteLabel == "" && e.Provider != "" && e.Model != "" {
		row.RouteLabel = e.Model + "/" + e.Provider
	}
	switch e.Type {
	case index.EventPathChange:
		row.After = readablePath(e.Detail)
		// The path before is the model's previous path change.
		var prev adminapi.EventList
		q := url.Values{"type": {index.EventPathChange}, "model": {e.Model}, "before": {strconv.FormatInt(e.ID, 10)}, "limit": {"1"}}
		if err := c.call(ctx, adminapi.PathEvents, q, &prev); err == nil && len(prev.Data) > 0 {
			row.Before = readablePath(prev.Data[0].Detail)
		}
	case index.EventCanary:
		kind, rest, _ := strings.Cut(e.Detail, ": ")
		if k, ok := strings.CutPrefix(kind, "canary_"); ok {
			row.Kind, row.Text = k, rest
		} else if strings.HasPrefix(e.Detail, "reenrolled") {
			row.Kind, row.Text = "reenrolled", strings.TrimSpace(strings.TrimPrefix(e.Detail, "reenrolled"))
		}
	case index.EventEval:
		// "passed|failed suite=… path=…": the outcome as the kind, the
		// rest as written (ids, counts, digests: no case text).
		if kind, rest, ok := strings.Cut(e.Detail, " "); ok && (kind == "passed" || kind == "failed") {
			row.Kind, row.Text = kind, rest
		}
	case index.EventContract:
		// "dropped|recovered pass_rate=… passed=P/N …": numbers and codes.
		if kind, rest, ok := strings.Cut(e.Detail, " "); ok && (kind == "dropped" || kind == "recovered") {
			row.Kind, row.Text = kind, rest
		}
	case index.EventFallback:
		row.Text = strings.ReplaceAll(e.Detail, ">", " → ")
	}
	return row
}

// readablePath writes a path change's "provider|model|fingerprint" as
// provider / model / fingerprint.
func readablePath(detail string) string {
	parts := strings.Split(detail, "|")
	for i, p := range parts {
		if p == "" {
			parts[i] = "—"
		}
	}
	return strings.Join(parts, " / ")
}
