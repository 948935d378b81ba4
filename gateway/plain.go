package gateway

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/custody-gateway/custody"
)

// finishPlain checks a complete upstream response and, if it holds,
// records it and delivers it byte for byte.
func (x *exchange) finishPlain(ctx context.Context, rt route, resp *http.Response) error {
	tx := x.tx
	body, err := x.readPlain(resp)
	if err != nil {
		if custody.CodeOf(err) == custody.CodeResponseTooLarge || custody.CodeOf(err) == custody.CodeOverloaded {
			return err
		}
		if ctx.Err() != nil && x.r.Context().Err() == nil {
			return custody.Wrap(custody.CodeUpstreamTimeout, err, "provider "+rt.cfg.Provider+" did not finish in time")
		}
		return custody.Wrap(custody.CodeUpstreamUnavailable, err, "provider "+rt.cfg.Provider+" broke off its answer")
	}
	if x.g.checks.none() {
		return x.deliverPlain(body) // the benchmarks' proxy path
	}
	x.checkEcho(rt, resp)
	r, err := x.wire.ParseResponse(body)
	if err != nil {
		return x.upstreamFault(rt, err)
	}
	tx.ResponseModel, tx.Fingerprint, tx.ResponseID = custody.Bound(r.Model), custody.Bound(r.Fingerprint), custody.Bound(r.ID)
	if tx.FinishReasons == nil && len(r.Finish) > 0 {
		tx.FinishReasons = x.finish[:0] // the exchange's room (nil while there is none)
	}
	tx.FinishReasons = keepFinish(tx.FinishReasons, r.Finish)
	if err := identityError(r.ID, r.Model, r.Fingerprint); err != nil && x.g.checks.runs(custody.CheckShape) {
		return x.upstreamFault(rt, err)
	}
	if r.Usage != nil {
		tx.PromptTokensReported, tx.CompletionTokens = r.Usage.Prompt, r.Usage.Completion
	}

	if x.g.checks.runs(custody.CheckShape) {
		x.verdictOf(x.shapeOf(r), custody.CheckShape)
	}
	x.checkModel(rt)
	// Identity before accounting, as in a stream: a swapped response is
	// first of all a replay (its usage, another request's, fails too).
	x.checkReplay(rt, r.ID, body)
	x.checkPromptTokens(r.Usage != nil)
	x.checkCache(rt, r.Usage.cached())
	if x.g.checks.runs(custody.CheckContamination) && x.prompt.wait().scanner != nil && x.wire.Traits().Generates {
		for _, t := range r.Texts {
			x.prompt.scanner.Write(t)
		}
		x.prompt.scanner.End() // the last word counts
		x.checkContamination()
	}
	x.checkContractPlain(&r, body)
	if tx.Rejected() {
		return firstFailure(tx)
	}
	if x.bridge != nil {
		if body, err = x.bridge.Response(body, &r); err != nil {
			return custody.Wrap(custody.CodeInternal, err, "the answer could not be translated")
		}
	}
	return x.deliverPlain(body)
}

// deliverPlain records a checked response and sends it byte for byte.
func (x *exchange) deliverPlain(body []byte) error {
	x.tx.Status = http.StatusOK
	x.respCommit.Write(body)
	if err := x.record(); err != nil {
		return err
	}
	h := x.setHeaders()
	h.set("Content-Type", "application/json")
	h.set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(http.StatusOK)
	x.started = true
	x.w.Write(body) // recorded; sent as far as the client lets us
	// Out now, not when the handler returns: what is left (the log line,
	// metrics, the span) is the operator's, and after a slow group commit
	// the requests it held run one after another on one P, each waiting
	// for the others' bookkeeping as well as their writes.
	http.NewResponseController(x.w).Flush()
	return nil
}

// readPlain reads a plain answer's body, at most
// limits.max_response_bytes of it, into one buffer whose every byte is
// first reserved in the in-flight budget: a body that says its length
// is refused before it is read when it is too long, and read into a
// buffer of exactly its size otherwise; one that does not is read into a
// buffer that doubles, each growth reserved, until it ends or passes the
// bound.
func (x *exchange) readPlain(resp *http.Response) ([]byte, error) {
	max := x.g.cfg.Limits.MaxResponseBytes
	tooLarge := func() error {
		x.tx.Fail(custody.CheckUpstream, custody.CodeResponseTooLarge, "over limits.max_response_bytes")
		return custody.Errorf(custody.CodeResponseTooLarge, "provider %s answered with more than limits.max_response_bytes (%d bytes)",
			x.tx.Provider, max)
	}
	if n := resp.ContentLength; n > max {
		return nil, tooLarge()
	} else if n >= 0 {
		if err := x.hold.upTo(n); err != nil {
			return nil, err
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	body := make([]byte, 0, min(firstReserve, max))
	for {
		if int64(len(body)) >= max {
			// Full: one byte more is one too many (read into a byte of
			// its own, not a buffer grown past the bound).
			var one [1]byte
			if _, err := io.ReadAtLeast(resp.Body, one[:], 1); err == io.EOF {
				return body[:max], nil
			} else if err != nil {
				return nil, err
			}
			return nil, tooLarge()
		}
		if len(body) == cap(body) {
			grown := min(2*int64(cap(body)), max)
			if err := x.hold.upTo(grown); err != nil {
				return nil, err
			}
			body = slices.Grow(body, int(grown)-len(body))
		}
		n, err := resp.Body.Read(body[len(body):min(cap(body), int(max))])
		body = body[:len(body)+n]
		if err == io.EOF {
			return body, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
