package gateway

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/custody-gateway/custody"
)

// handle adapts a handler that returns an error. It is the one place,
// with writeError, where an error becomes a status and an OpenAI-shaped
// body: the client sees the code and a safe message; the operator's log
// gets the cause.
func (g *Gateway) handle(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			g.writeError(w, openaiChat, err)
		}
	})
}

// clientError returns the *custody.Error to show for err: a non-custody
// error becomes internal_error with a message that reveals nothing.
func clientError(err error) *custody.Error {
	var e *custody.Error
	if errors.As(err, &e) {
		return e
	}
	return &custody.Error{Code: custody.CodeInternal, Message: "internal error", Err: err}
}

// writeError writes err as an error response in dialect d (custody's own
// endpoints answer in OpenAI's). Headers set before (the Custody-*
// headers) are kept.
func (g *Gateway) writeError(w http.ResponseWriter, d Dialect, err error) {
	e := clientError(err)
	if e.Code == custody.CodeInternal || e.Err != nil {
		g.log.Warn("request failed", "code", e.Code, "err", err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	body := d.ErrorBody(e)
	w.WriteHeader(e.Status())
	w.Write(body)
}
