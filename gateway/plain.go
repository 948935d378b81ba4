package gateway

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/custody-gateway/custody"
)

// maxResponse bounds a non-streamed upstream body.
const maxResponse = 64 << 20

// finishPlain checks a complete upstream response and, if it holds,
// records it and delivers it byte for byte.
func (x *exchange) finishPlain(ctx context.Context, rt route, resp *http.Response) error {
	tx := x.tx
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		if ctx.Err() != nil && x.r.Context().Err() == nil {
			return custody.Wrap(custody.CodeUpstreamTimeout, err, "provider "+rt.cfg.Provider+" did not finish in time")
		}
		return custody.Wrap(custody.CodeUpstreamUnavailable, err, "provider "+rt.cfg.Provider+" broke off its answer")
	}
	if len(body) > maxResponse {
		return custody.Errorf(custody.CodeUpstreamUnavailable, "provider %s answered with more than %d bytes", rt.cfg.Provider, maxResponse)
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
	x.checkContractPlain(r.Chat, body)
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
	return nil
}
