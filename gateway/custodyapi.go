package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
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
	// The evals' status is mounted on mux by mountEvals; the console
	// reads it too.
	admin.Handle("GET "+PathEvals, g.handle(g.evalStatus))
	e.admin = inProcess(admin)
	mux.Handle("GET /log/", e.Log.Handler())
}

// Paths of the admin API (GET, admin key unless said), documented in
// openapi.json. AdminAPI serves the GET ones but the document.
const (
	PathOpenAPI   = "/v1/custody/openapi.json"
	PathRecords   = "/v1/custody/records"
	PathEvents    = "/v1/custody/events"
	PathStats     = "/v1/custody/stats"
	PathBreakdown = "/v1/custody/breakdown"
	PathLogStatus = "/v1/custody/log"
	PathCanaries  = "/v1/custody/canaries"
	PathEvals     = "/v1/custody/evals"
	// PathEvalsRun is POST, admin key: never served in process.
	PathEvalsRun = "/v1/custody/evals/run"
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
