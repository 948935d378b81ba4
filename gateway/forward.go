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
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/policy"
	"github.com/custody-gateway/custody/telemetry/tracecontext"
	"github.com/custody-gateway/custody/upstream"
)

// forward tries the model's routes in order, as the policy permits, and
// finishes the exchange with the first upstream that answers. Routes
// outside the policy's regions are never used; moving past the first
// eligible route (because it failed, its breaker is open or canaries
// quarantined it) is a fallback, which the policy may forbid and the
// retry budget bounds.
func (x *exchange) forward() error {
	g, tx := x.g, x.tx
	now := g.now()
	g.budget.Request(now)
	var primaryErr, lastErr error
	tried, excluded := 0, 0
	routes := x.model.routes
	if x.probe != nil {
		// A canary probes its one route, whatever its health: that is how
		// a quarantined route is seen to recover.
		routes = routes[x.probe.route : x.probe.route+1]
	}
	for _, rt := range routes {
		pr := policy.Route{Provider: rt.cfg.Provider, Region: rt.prov.Region}
		if x.probe == nil {
			pr.Quarantined = g.health != nil && (g.health.Quarantined(x.model.cfg.Name, rt.index) ||
				x.policy.OnCacheShared == "quarantine" && cacheShared(g.health, x.model.cfg.Name, rt.index))
			pr.Quarantined = pr.Quarantined || g.evalBlock(x.policy, x.model.cfg.Name, rt.index) != ""
			pr.BreakerOpen = rt.client.Breaker().State(now) == upstream.StateOpen
		}
		if !policy.Eligible(x.policy, pr) {
			excluded++
			continue
		}
		if tried > 0 {
			if !policy.MayFallback(x.policy) {
				switch custody.CodeOf(primaryErr) {
				case custody.CodeRouteQuarantined:
					return primaryErr // no permitted route is left
				case custody.CodeContextLengthExceeded:
					return primaryErr // the prompt's fault, not the route's
				}
				return &custody.Error{Code: custody.CodeFallbackNotPermitted, Err: primaryErr,
					Message: fmt.Sprintf("policy %s forbids fallback; the primary route (%s) failed: %s", x.policy.Name, tx.FallbackChain[0], clientError(primaryErr).Message)}
			}
			if !g.budget.Retry(now) {
				return lastErr
			}
		}
		tried++
		tx.FallbackChain = append(tx.FallbackChain, rt.cfg.Provider)
		tx.Provider, tx.Region, tx.UpstreamModel, tx.Route = rt.cfg.Provider, rt.prov.Region, rt.cfg.Model, rt.index
		tx.Decision = "primary"
		if tried > 1 {
			tx.Decision = "fallback"
		}
		var err error
		switch skip := policy.Healthy(pr); {
		case skip == policy.SkipQuarantined:
			err = g.quarantineError(x.policy, x.model.cfg.Name, rt)
		case x.probe == nil && !rt.client.Breaker().Allow(now):
			err = custody.Errorf(custody.CodeUpstreamUnavailable, "provider %s is failing; its circuit breaker is open", rt.cfg.Provider)
		default:
			var done bool
			done, err = x.attempt(rt)
			if done || err == nil {
				rt.client.Breaker().Success()
				return err
			}
			if !policy.Retriable(err) {
				return err
			}
			if custody.CodeOf(err) != custody.CodeContextLengthExceeded {
				// An upstream that refused an over-long prompt is healthy.
				rt.client.Breaker().Failure(g.now(), retryAfter(err))
			}
		}
		if primaryErr == nil {
			primaryErr = err
		}
		lastErr = err
	}
	if c := custody.CodeOf(primaryErr); lastErr != nil && excluded > 0 && c != custody.CodeRouteQuarantined && c != custody.CodeContextLengthExceeded {
		// Routes were left that the policy's regions exclude: the request
		// failed because of the policy, and says so.
		return &custody.Error{Code: custody.CodeFallbackNotPermitted, Err: primaryErr,
			Message: fmt.Sprintf("policy %s permits no other route; the primary route (%s) failed: %s", x.policy.Name, tx.FallbackChain[0], clientError(primaryErr).Message)}
	}
	if lastErr != nil {
		return lastErr
	}
	return &custody.Error{Code: custody.CodeFallbackNotPermitted,
		Message: fmt.Sprintf("policy %s permits none of the routes of model %s", x.policy.Name, x.model.cfg.Name)}
}

// retryAfter is the upstream's Retry-After carried by err, if any.
func retryAfter(err error) time.Duration {
	var e *custody.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return time.Duration(e.RetryAfter) * time.Second
	}
	return 0
}

// attempt makes one upstream call. It returns done=false with an error
// when the failure may be retried on the next route (transport failure,
// 5xx, 429, the upstream's own context-length refusal).
func (x *exchange) attempt(rt route) (done bool, err error) {
	ctx, cancel := context.WithCancel(x.r.Context())
	defer cancel()
	set, cacheKey := x.cacheMembers(rt)
	x.cacheKey = cacheKey
	call := upstream.Call{
		Path:      x.ep.path,
		Body:      x.req.Rewrite(rt.cfg.Model, set...),
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

// checkEcho runs the request-id echo check when the provider echoes.
func (x *exchange) checkEcho(rt route, resp *http.Response) {
	h := rt.prov.RequestIDEcho
	if h == "" {
		return
	}
	if err := check.RequestID(x.tx.ID, resp.Header.Get(h)); err != nil {
		x.tx.Fail(custody.CheckRequestID, custody.CodeOf(err), "")
		return
	}
	x.tx.Pass(custody.CheckRequestID, "")
}
