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
}

// mount adds the custody API and the log to the gateway's mux.
func (e *Evidence) mount(g *Gateway, mux *http.ServeMux) {
	mux.Handle("GET /v1/custody/receipts/{id}", g.handle(func(w http.ResponseWriter, r *http.Request) error {
		return e.receipt(g, w, r)
	}))
	mux.Handle("GET /v1/custody/records", g.handle(func(w http.ResponseWriter, r *http.Request) error {
		return e.records(g, w, r)
	}))
	mux.Handle("GET /v1/custody/events", g.handle(func(w http.ResponseWriter, r *http.Request) error {
		return e.events(g, w, r)
	}))
	mux.Handle("GET /log/", e.Log.Handler())
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

func (e *Evidence) records(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.keys.admin(r); err != nil {
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
	if err != nil {
		return indexDown(err)
	}
	if recs == nil {
		recs = []index.Record{}
	}
	return writeJSON(w, map[string]any{"object": "list", "data": recs})
}

func (e *Evidence) events(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.keys.admin(r); err != nil {
		return err
	}
	q := r.URL.Query()
	eq := index.EventQuery{Type: q.Get("type")}
	switch eq.Type {
	case "", "fallback", "path_change", "violation", "canary":
	default:
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "type", Message: "type must be fallback, path_change, violation or canary"}
	}
	var err error
	if eq.Since, err = timeParam(q.Get("since"), "since"); err != nil {
		return err
	}
	if eq.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	evs, err := e.Index.Events(r.Context(), eq)
	if err != nil {
		return indexDown(err)
	}
	if evs == nil {
		evs = []index.Event{}
	}
	return writeJSON(w, map[string]any{"object": "list", "data": evs})
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
