package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/custody-gateway/custody"
)

// deliver writes response bytes to the client, committing to them.
func (x *exchange) deliver(b []byte) error {
	x.started = true
	x.respCommit.Write(b)
	_, err := x.w.Write(b)
	return err
}

// recordTimeout bounds the wait for the ledger: past it the ledger is
// unavailable and the request fails closed.
const recordTimeout = 10 * time.Second

// record makes the transaction durable (the response commitment covers
// what was delivered so far).
func (x *exchange) record() error {
	x.tx.Bound() // no upstream or client string can make the leaf too large
	x.tx.ResponseCommitment = x.respCommit.Sum(nil)
	x.tx.Duration = x.g.now().Sub(x.tx.Time)
	// A client that went away does not cancel the record: what the
	// upstream did must be in the ledger either way.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.r.Context()), recordTimeout)
	defer cancel()
	if err := x.g.rec.Record(ctx, x.tx); err != nil {
		return custody.Wrap(custody.CodeLedgerUnavailable, err, "the transaction could not be recorded; nothing was served")
	}
	return nil
}

// fail answers with err (or ends a started stream with it) after
// recording the rejection.
func (x *exchange) fail(err error) {
	if errors.Is(err, context.Canceled) && x.r.Context().Err() != nil {
		err = &custody.Error{Code: custody.CodeClientClosed, Message: "the client closed the connection", Err: err}
	}
	tx, e := x.tx, clientError(err)
	if _, failed := tx.Failure(); !failed {
		// A refusal that is no check's (the request, the route, the
		// ledger, the upstream's transport): its outcome under the check
		// the outcome table names, so that Custody-Checks, the leaf and
		// the metric say it too. No detail: the code says it all, and
		// an upstream's message stays out of the ledger.
		tx.Fail(e.Code.Check(), e.Code, "")
	}
	tx.Status = e.Status()
	if x.started {
		x.endStreamWithError(e)
		return
	}
	if x.recordable {
		body := x.front.ErrorBody(e)
		x.respCommit.Write(body)
		if rerr := x.record(); rerr != nil {
			x.g.log.Error("rejection not recorded", "id", tx.ID, "code", e.Code, "err", rerr)
			x.recordable = false
		}
	}
	x.setHeaders()
	x.g.writeError(x.w, x.front, e)
}

// setHeaders writes the Custody-* headers listed in README.md (Talk to it) and docs/dialects.md.
// setHeaders sets the evidence headers, and returns their values for
// the caller's own.
func (x *exchange) setHeaders() *headerValues {
	h, tx := &headerValues{h: x.w.Header()}, x.tx
	h.set("Custody-Request-Id", tx.ID)
	h.set("Custody-Verdict", string(tx.Conclude()))
	if tx.ResponseModel != "" {
		h.set("Custody-Model", tx.ResponseModel)
	}
	if tx.Provider != "" {
		h.set("Custody-Provider", tx.Provider)
	}
	h.set("Custody-Fallback", tx.FallbackHeader())
	if x.recordable {
		h.set("Custody-Receipt", "/v1/custody/receipts/"+tx.ID)
	}
	h.set("Custody-Checks", tx.ChecksHeader())
	return h
}

// headerValues sets response headers from one backing array of values,
// where Header.Set makes a slice for each (Header.Set was about 5 % of
// custody serve's allocated objects). Keys must be canonical
// (textproto.CanonicalMIMEHeaderKey of themselves).
type headerValues struct {
	h    http.Header
	vals [9]string
	n    int
}

func (v *headerValues) set(key, value string) {
	if v.n == len(v.vals) {
		v.h.Set(key, value)
		return
	}
	v.vals[v.n] = value
	v.h[key] = v.vals[v.n : v.n+1 : v.n+1]
	v.n++
}
