package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/upstream"
)

// Recorder makes transactions durable. Record returns only once the
// transaction's leaf is durably sequenced; an error means it is not, and
// the gateway fails closed with ledger_unavailable.
type Recorder interface {
	// Salts are the per-request commitment salts, deterministic for a
	// request id so a receipt can hand them to the client later.
	Salts(requestID string) (request, response [32]byte)
	Record(ctx context.Context, tx *custody.Transaction) error
}

// Options are what a Gateway is built from; cmd/custody assembles them.
type Options struct {
	Config *config.Config
	// Clients maps provider names to their clients.
	Clients  map[string]*upstream.Client
	Recorder Recorder
	// Contamination, when set, runs the cross-request contamination check.
	Contamination Contamination
	Logger        *slog.Logger
	// TransactionLog, when set, takes each transaction's log line, which
	// the gateway then encodes itself, byte for byte as
	// slog.NewJSONHandler(TransactionLog, nil) would write it (a line
	// that needs escaping, or has a cause, still goes through Logger). It
	// must be safe for concurrent writes of whole lines: serve gives the
	// JSON logger's own writer.
	TransactionLog io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Health, when set, quarantines routes that canaries found broken.
	Health Health
	// Observer, when set, is told of transactions and upstream calls.
	Observer Observer
	// KnownPaths seeds path-change detection (from the index's history).
	KnownPaths []Path
	// OnPathChange, when set, is called (in its own goroutine) when a
	// route serves from a tuple not seen before: canaries hook in here.
	OnPathChange func(model string, route int)
	// SharedReplay, when set, extends the replay check across every
	// replica sharing the index (recorder.Recorder.Claim).
	SharedReplay func(ctx context.Context, key, requestID string, ttl time.Duration) (string, error)
	// Checks are the names of the response checks to run (custody.Check*:
	// request_id, shape, members, model, replay, prompt_tokens, cache,
	// contamination, stream). Nil runs every one. An empty list runs none:
	// the benchmarks measure the proxy path alone with it; serve never
	// sets it.
	Checks []string
	// Tracer, when set, traces transactions and upstream attempts.
	Tracer Tracer
	// Extra handlers mounted beside the API (the log, admin endpoints).
	Mounts map[string]http.Handler
	// AuthFailures, when set, is the admin-key failure limiter to use (the
	// previous gateway's, on reload); nil means a new one of
	// Config.Limits.AuthFailuresPerMinute.
	AuthFailures *AuthFailures
	// Replay, when set, is the replay check's memory to keep using (the
	// previous gateway's, on reload, so that a response delivered before
	// a reload is still known after it). It is used only if its window
	// and bound are the configuration's (Config.Checks.ReplayWindow,
	// ReplayMaxEntries); otherwise, and when nil, a new one is made.
	Replay *check.Replay
	// Inflight, when set, is the process's budget of answers held in
	// memory (the previous gateway's, on reload: one budget for every
	// exchange in flight, whichever gateway began it); its size becomes
	// Config.Limits.MaxInflightBytes. Nil means a new one.
	Inflight *Budget
}

// Tracer traces a transaction and each of its upstream attempts
// (OpenTelemetry, in telemetry/). It must never record prompt or
// response text.
type Tracer interface {
	// StartTransaction begins the transaction's span, continuing the
	// client's trace context from r; end is called once it is finished.
	StartTransaction(r *http.Request) (ctx context.Context, end func(tx *custody.Transaction))
	// StartAttempt begins an upstream attempt's span under ctx; its
	// traceparent is what custody sends upstream.
	StartAttempt(ctx context.Context, provider, model string) (traceparent string, end func(status int, err error))
}

// Observer is told of every finished transaction and upstream call
// (metrics and traces).
type Observer interface {
	Transaction(tx *custody.Transaction)
	// Refusal is a refusal by one of custody's own endpoints (not an
	// exchange): not_found, method_not_allowed, forbidden, rate_limited.
	Refusal(code custody.Code)
	Upstream(provider string, d time.Duration)
}

// Path is a (provider, response model, fingerprint) tuple already seen
// for a model, to seed path-change detection at start.
type Path struct{ Model, Provider, ResponseModel, Fingerprint string }

// CacheHealth is implemented by a Health that knows which routes' prompt
// caches the cache canary found shared across tenants (canary.Runner).
type CacheHealth interface {
	CacheShared(model string, route int) bool
}

func cacheShared(h Health, model string, route int) bool {
	ch, ok := h.(CacheHealth)
	return ok && ch.CacheShared(model, route)
}

// Health tells which routes canaries have quarantined.
type Health interface {
	Quarantined(model string, route int) bool
}
