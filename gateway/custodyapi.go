package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/recorder"
)

// Evidence is what the custody API reads: records and events from the
// index, receipts from the log.
type Evidence struct {
	Recorder *recorder.Recorder
	Index    index.Index
	Log      *ledger.Log
	// HTTP fetches receipts from other replicas; nil means the default.
	HTTP *http.Client

	admin    http.Handler // AdminAPI, once mounted
	logState checkpointSeen
}

// mount adds the custody API and the log to the gateway's mux, and
// builds the gateway's AdminAPI: the same admin endpoints for a caller in
// the process that has checked the operator's login itself (the console).
func (e *Evidence) mount(g *Gateway, mux *http.ServeMux) {
	mux.Handle("GET /v1/custody/receipts/{id}", g.handle(func(w http.ResponseWriter, r *http.Request) error {
		return e.receipt(g, w, r)
	}))
	mux.Handle("GET "+PathOpenAPI, http.HandlerFunc(serveOpenAPI))
	admin := http.NewServeMux()
	for path, h := range map[string]func(*Gateway, http.ResponseWriter, *http.Request) error{
		PathRecords:   e.records,
		PathEvents:    e.events,
		PathStats:     e.stats,
		PathBreakdown: e.breakdown,
		PathLogStatus: e.logStatus,
		PathCanaries:  e.canaries,
	} {
		h := g.handle(func(w http.ResponseWriter, r *http.Request) error { return h(g, w, r) })
		mux.Handle("GET "+path, h)
		admin.Handle("GET "+path, h)
	}
	e.admin = inProcess(admin)
	mux.Handle("GET /log/", e.Log.Handler())
}

// Paths of the admin API (GET, admin key), documented in openapi.json.
const (
	PathOpenAPI   = "/v1/custody/openapi.json"
	PathRecords   = "/v1/custody/records"
	PathEvents    = "/v1/custody/events"
	PathStats     = "/v1/custody/stats"
	PathBreakdown = "/v1/custody/breakdown"
	PathLogStatus = "/v1/custody/log"
	PathCanaries  = "/v1/custody/canaries"
)

// AdminAPI serves the admin API's GET endpoints without asking for an
// admin key, for a caller in this process that has authenticated the
// operator its own way (the console's login). It is never mounted on a
// listener. Before the gateway mounts e it answers 404.
func (e *Evidence) AdminAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.admin == nil {
			http.NotFound(w, r)
			return
		}
		e.admin.ServeHTTP(w, r)
	})
}

// inProcessKey marks a request that AdminAPI serves: only code in this
// process can put it in a context.
type inProcessKey struct{}

func inProcess(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), inProcessKey{}, true)))
	})
}

// adminAuth is keys.admin, except for a request AdminAPI serves.
func (g *Gateway) adminAuth(r *http.Request) error {
	if ok, _ := r.Context().Value(inProcessKey{}).(bool); ok {
		return nil
	}
	return g.keys.admin(r)
}

// receipt serves a tenant its own receipt; another tenant's is "not
// found", so its existence is not revealed.
func (e *Evidence) receipt(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	t, err := g.keys.tenant(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	notFound := custody.Errorf(custody.CodeNotFound, "no receipt for request %s", id)
	rec, err := e.Recorder.Lookup(r.Context(), id)
	switch {
	case errors.Is(err, custody.ErrNotFound) && r.Header.Get(forwardedHeader) == "":
		// Not indexed yet, perhaps because another replica recorded it a
		// moment ago: ask the others.
		return e.remoteReceipt(w, r, id, "")
	case err != nil && !errors.Is(err, custody.ErrNotFound):
		// Not "not found": the index cannot say, and the newest leaves of
		// this replica's log (Lookup searched them) do not hold it.
		return indexDown(err)
	case err != nil || rec.Tenant != t.ID:
		return notFound
	case rec.Shard != e.Log.Origin():
		return e.remoteReceipt(w, r, id, rec.Shard)
	case rec.LeafIndex < 0:
		return notFound
	}
	rcpt, err := e.Log.Receipt(r.Context(), uint64(rec.LeafIndex), id)
	if err != nil {
		return custody.Wrap(custody.CodeLedgerUnavailable, err, "the receipt could not be read from the log")
	}
	b, err := rcpt.Marshal()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(b)
	return err
}

// forwardedHeader marks a receipt request one replica makes of another,
// so that it is never forwarded again.
const forwardedHeader = "Custody-Forwarded"

// remoteReceipt fetches a receipt from the replica whose log shard holds
// it (shard), or, when the record is not indexed yet, from whichever
// other replica has it, with the caller's own credentials: only the
// recording replica has the keys that derive the salts, so the salts
// never have to be stored anywhere.
func (e *Evidence) remoteReceipt(w http.ResponseWriter, r *http.Request, id, shard string) error {
	if r.Header.Get(forwardedHeader) != "" {
		return custody.Errorf(custody.CodeLedgerUnavailable, "the shard registry is inconsistent for log %s", shard)
	}
	shards, err := e.Index.Shards(r.Context())
	if err != nil {
		return custody.Wrap(custody.CodeLedgerUnavailable, err, "the shard list could not be read")
	}
	var lastErr error = custody.Errorf(custody.CodeNotFound, "no receipt for request %s", id)
	for _, s := range shards {
		if s.Origin == e.Log.Origin() || (shard != "" && s.Origin != shard) || s.URL == "" {
			continue
		}
		status, body, err := e.fetchReceipt(r, strings.TrimRight(s.URL, "/"), id)
		if err != nil {
			lastErr = custody.Wrap(custody.CodeLedgerUnavailable, err, "the replica holding log "+s.Origin+" is unreachable; retry later")
			continue
		}
		if status == http.StatusNotFound && shard == "" {
			continue
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_, err = w.Write(body)
		return err
	}
	return lastErr
}

func (e *Evidence) fetchReceipt(r *http.Request, base, id string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/custody/receipts/"+url.PathEscape(id), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	req.Header.Set(forwardedHeader, "1")
	resp, err := e.client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

func (e *Evidence) client() *http.Client {
	if e.HTTP != nil {
		return e.HTTP
	}
	return http.DefaultClient
}

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

// indexDown is the answer when the index does not answer: 503
// index_unavailable with a reason; the cause goes to the operator's log.
func indexDown(err error) error {
	return custody.Wrap(custody.CodeIndexUnavailable, err, "the index is unavailable, so this cannot be looked up now; retry later")
}

// timeParam accepts RFC 3339 or Unix seconds.
func timeParam(v, name string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, &custody.Error{Code: custody.CodeInvalidRequest, Param: name, Message: name + " must be RFC 3339 or Unix seconds"}
}

func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, &custody.Error{Code: custody.CodeInvalidRequest, Param: name, Message: name + " must be a non-negative integer"}
	}
	return n, nil
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
