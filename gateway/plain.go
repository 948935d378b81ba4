package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/template"
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
	if x.g.skipChecks {
		return x.deliverPlain(body)
	}
	x.checkEcho(rt, resp)
	r, err := x.wire.ParseResponse(body)
	if err != nil {
		return x.upstreamFault(rt, err)
	}
	tx.ResponseModel, tx.Fingerprint, tx.ResponseID = r.Model, r.Fingerprint, r.ID
	if r.Usage != nil {
		tx.PromptTokensReported, tx.CompletionTokens = r.Usage.Prompt, r.Usage.Completion
	}

	x.verdictOf(r.Shape, custody.CheckShape)
	x.checkModel(rt)
	// Identity before accounting, as in a stream: a swapped response is
	// first of all a replay (its usage, another request's, fails too).
	x.checkReplay(rt, r.ID, body)
	x.checkPromptTokens(r.Usage != nil)
	x.checkCache(rt, r.Usage.cached())
	if x.prompt.wait().scanner != nil && x.wire.Traits().Generates {
		x.prompt.scanner.Write([]byte(r.Text))
		x.checkContamination()
	}
	if tx.Verdict == custody.Rejected {
		return firstFailure(tx)
	}
	if tx.Verdict == "" {
		tx.Verdict = custody.Verified
	}
	if x.bridge != nil {
		if body, err = x.bridge.Response(body); err != nil {
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
	x.setHeaders()
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(http.StatusOK)
	x.started = true
	x.w.Write(body) // recorded; sent as far as the client lets us
	return nil
}

// verdictOf records the outcome of a check that returned err.
func (x *exchange) verdictOf(err error, name string) {
	if err == nil {
		x.tx.Pass(name, "")
		return
	}
	x.tx.Fail(name, custody.CodeOf(err), clientError(err).Message)
}

func (x *exchange) checkModel(rt route) {
	tx := x.tx
	if tx.ResponseModel != "" && x.g.paths.observe(tx.RequestedModel, tx.Provider, tx.ResponseModel, tx.Fingerprint) {
		tx.PathChange = true
		if x.g.onPath != nil && x.probe == nil { // a canary is already probing
			go x.g.onPath(tx.RequestedModel, rt.index)
		}
	}
	x.verdictOf(check.Model(x.tx.ResponseModel, rt.cfg.Accept, rt.cfg.Model, x.policy.RequirePinned), custody.CheckModel)
}

// checkPromptTokens compares reported usage with the local count. Missing
// usage leaves the transaction unverifiable: flagged, not verified.
func (x *exchange) checkPromptTokens(haveUsage bool) {
	tx := x.tx
	n := x.prompt.wait().counts.For(x.engine())
	tx.PromptTokensLocal = n.Local
	if why := x.uncounted(); why != "" {
		tx.Skip(custody.CheckPromptTokens, why) // the verdict does not change: nothing was guessed
		return
	}
	if !haveUsage {
		tx.Skip(custody.CheckPromptTokens, "no usage reported")
		if tx.Verdict == "" || tx.Verdict == custody.Verified {
			tx.Verdict = custody.Flagged
		}
		return
	}
	x.verdictOf(check.PromptTokens(tx.PromptTokensReported, n.Band), custody.CheckPromptTokens)
}

// checkReplay claims the response id for this transaction and the body
// digest for the request it answered (check.ResponseClaims).
func (x *exchange) checkReplay(rt route, id string, body []byte) {
	now := x.g.now()
	var asked [32]byte
	if body != nil {
		asked = x.wreq.Digest(rt.cfg.Model) // what the upstream answered
	}
	claims := check.ResponseClaims(rt.cfg.Provider, id, x.tx.ID, asked, body)
	var err error
	for _, c := range claims {
		if err = x.g.replay.Claim(c.Key, c.Owner, now); err != nil {
			break
		}
	}
	if err == nil && x.g.sharedReplay != nil {
		err = x.claimShared(claims)
		if errors.Is(err, errIndexDown) {
			// The check could not run: never "ok". The local memory
			// still covered this replica.
			if x.g.cfg.Checks.OnIndexUnavailable == "reject" {
				x.tx.Fail(custody.CheckReplay, custody.CodeIndexUnavailable, indexDownMessage)
				return
			}
			x.tx.Skip(custody.CheckReplay, "index unavailable")
			if x.tx.Verdict == "" || x.tx.Verdict == custody.Verified {
				x.tx.Verdict = custody.Flagged
			}
			return
		}
	}
	x.verdictOf(err, custody.CheckReplay)
}

// errIndexDown is claimShared's error when the index does not answer.
var errIndexDown = errors.New("the shared index is unavailable")

const indexDownMessage = "the index shared by the replicas is unavailable, so the replay check across replicas cannot run (checks.on_index_unavailable: reject)"

// claimShared claims the response in the index that every replica
// shares, so a response delivered through one replica cannot be delivered
// again through another. If the index cannot answer, the check cannot
// run: errIndexDown, and checkReplay applies checks.on_index_unavailable.
func (x *exchange) claimShared(claims []check.ReplayClaim) error {
	for _, c := range claims {
		owner, err := x.g.sharedReplay(x.r.Context(), c.Key, c.Owner, x.g.cfg.Checks.ReplayWindow)
		if err != nil {
			x.g.log.Warn("shared replay claim failed: the replay check is skipped", "id", x.tx.ID, "err", err)
			return fmt.Errorf("%w: %w", errIndexDown, err)
		}
		if owner != c.Owner {
			// The owner may be another tenant's: named to the operator only.
			return &custody.Error{Code: custody.CodeResponseReplayed, Message: check.ReplayedMessage + " (through another replica)",
				Err: fmt.Errorf("first delivered to %s", owner)}
		}
	}
	return nil
}

// checkContamination acts on the scanner's finding by policy: reject, or
// serve flagged.
func (x *exchange) checkContamination() {
	detail, found := x.prompt.scanner.Finding()
	switch {
	case !found:
		x.tx.Pass(custody.CheckContamination, "")
	case x.policy.OnContamination == "flag":
		x.tx.Flag(custody.CheckContamination, custody.CodeCrossRequestContamination, detail)
	default:
		x.tx.Fail(custody.CheckContamination, custody.CodeCrossRequestContamination, detail)
	}
}

// firstFailure is the error of the transaction's rejecting check.
func firstFailure(tx *custody.Transaction) error {
	for _, o := range tx.Outcomes {
		if o.Status == custody.StatusFailed {
			msg := o.Detail
			if o.Code == custody.CodeCrossRequestContamination {
				// The detail names the source request: the operator's,
				// not this client's, to know.
				msg = "the upstream response carries another request's data"
			}
			if msg == "" {
				msg = "integrity check " + o.Check + " failed"
			}
			return &custody.Error{Code: o.Code, Message: msg}
		}
	}
	return errors.New("rejected without a failed check")
}

// engine is how the route that answered renders chat.
func (x *exchange) engine() template.Engine {
	if r := x.tx.Route; r >= 0 && r < len(x.model.routes) {
		return x.model.routes[r].engine
	}
	return template.EngineAuto
}
