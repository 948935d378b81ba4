package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/telemetry/tracecontext"
	"github.com/custody-gateway/custody/upstream"
)

// attempt makes one upstream call. It returns done=false with an error
// when the failure may be retried on the next route (transport failure,
// 5xx, 429, the upstream's own context-length refusal).
func (x *exchange) attempt(rt route) (done bool, err error) {
	// A stream's attempt is cancelled when it is abandoned (relayStream
	// cancels it on a gap or a failed check); a plain one needs no
	// context of its own before its timeout's, below (one context fewer
	// a request: each costs allocations and a place in its parent's
	// children).
	ctx, cancel := x.r.Context(), context.CancelFunc(nil)
	if x.tx.Stream {
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}
	// Room for the answer's first read, before the upstream is asked:
	// past the in-flight budget a new request waits here, and is refused
	// overloaded, before it costs the upstream anything. The answer's
	// reading grows the reservation (finishPlain, relayStream); all of it
	// is returned when the attempt ends, however it ends.
	x.hold = x.g.inflight.hold(ctx, &x.held)
	defer x.hold.free()
	if err := x.hold.upTo(firstReserve); err != nil {
		return true, err
	}
	if err := x.speak(rt); err != nil {
		return true, err
	}
	set, cacheKey := x.cacheMembers(rt)
	x.cacheKey = cacheKey
	call := upstream.Call{
		Path:      x.wire.Path(),
		Body:      x.wreq.Upstream(rt.cfg.Model, set...),
		RequestID: x.tx.ID,
		Stream:    x.tx.Stream,
	}
	if x.g.tracer != nil {
		var end func(int, error)
		call.TraceParent, end = x.g.tracer.StartAttempt(ctx, rt.cfg.Provider, rt.cfg.Model)
		defer func() { end(x.tx.Status, err) }()
	} else {
		call.TraceParent = tracecontext.Continue(x.r.Header.Values("Traceparent"))
	}
	if !x.tx.Stream {
		// A plain call is bounded as a whole; a stream by the gap between
		// chunks (see relayStream).
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, rt.prov.Timeout)
		defer c2()
	}
	began := x.g.now()
	resp, err := rt.client.Do(ctx, call)
	if x.g.observer != nil {
		defer func() { x.g.observer.Upstream(rt.cfg.Provider, x.g.now().Sub(began)) }()
	}
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return x.upstreamStatus(rt, resp)
	}
	if x.tx.Stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return true, x.relayStream(ctx, cancel, rt, resp)
	}
	return true, x.finishPlain(ctx, rt, resp)
}

// speak sets the attempt's wire dialect for the route's provider: the
// front's own (pass-through), or another reached through a bridge, with
// the client's body translated to it.
func (x *exchange) speak(rt route) error {
	x.wire, x.bridge = wireOf(x.front, rt.prov)
	x.contract, x.noContract = nil, false // the contract is the wire's
	if x.bridge == nil {
		x.wreq = x.req
		return nil
	}
	body, err := x.bridge.Request(x.req)
	if err == nil {
		x.wreq, err = x.wire.ParseRequest(body)
	}
	if err != nil {
		return invalidRequest(err)
	}
	noteTranslation(x.tx, x.bridge, x.req)
	return nil
}

// upstreamStatus turns a non-2xx upstream answer into an error: a
// retriable one for 5xx, 429 and the upstream's own context-length
// refusal (in whichever engine's dialect: it becomes 400
// context_length_exceeded with the upstream's figures); otherwise the
// upstream's refusal passed to the client with its status. The
// upstream's message is passed on sanitised (upstream.ReadRefusal): never
// its key, a credential or markup.
func (x *exchange) upstreamStatus(rt route, resp *http.Response) (bool, error) {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	ref := upstream.ReadRefusal(resp.StatusCode, raw, rt.client.Config().APIKey)
	prov := rt.cfg.Provider
	switch {
	case ref.ContextOverflow:
		msg := fmt.Sprintf("provider %s refused the prompt as too long", prov)
		if ref.PromptTokens > 0 && ref.ContextTokens > 0 {
			msg += fmt.Sprintf(": %d prompt tokens for a context of %d", ref.PromptTokens, ref.ContextTokens)
		}
		if ref.Message != "" {
			msg += " (" + ref.Message + ")"
		}
		return false, &custody.Error{Code: custody.CodeContextLengthExceeded, HTTPStatus: http.StatusBadRequest, Message: msg}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		msg := fmt.Sprintf("provider %s answered HTTP %d", prov, resp.StatusCode)
		if ref.Message != "" {
			msg += ": " + ref.Message
		}
		return false, &custody.Error{Code: custody.CodeUpstreamUnavailable, RetryAfter: min(max(ra, 0), 3600), Message: msg}
	}
	msg := ref.Message
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return true, &custody.Error{Code: custody.CodeUpstreamRejected, HTTPStatus: resp.StatusCode,
		Message: fmt.Sprintf("provider %s refused the request: %s", prov, msg)}
}

// retryAfter is the upstream's Retry-After carried by err, if any.
func retryAfter(err error) time.Duration {
	var e *custody.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return time.Duration(e.RetryAfter) * time.Second
	}
	return 0
}
