package custody

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is the one name of an outcome: see the package documentation.
type Code string

// The codes of SPEC §4, and the few custody adds (rate_limited, forbidden,
// not_found, use_case_unknown is folded into invalid_request).
const (
	CodeContextLengthExceeded Code = "context_length_exceeded"
	CodeInvalidRequest        Code = "invalid_request"
	CodeRequestTooLarge       Code = "request_too_large"
	CodeUnauthorized          Code = "unauthorized"
	CodeForbidden             Code = "forbidden"
	CodeNotFound              Code = "not_found"
	CodeMethodNotAllowed      Code = "method_not_allowed"
	CodeRateLimited           Code = "rate_limited"
	CodePromptTokenMismatch   Code = "prompt_token_mismatch"
	CodeModelMismatch         Code = "model_mismatch"
	CodeRequestIDMismatch     Code = "request_id_mismatch"
	CodeResponseReplayed      Code = "response_replayed"
	CodeStreamInconsistent    Code = "stream_inconsistent"
	// CodeStreamTruncated: the upstream's stream ended (connection closed,
	// body ended) without its terminal event. custody never completes such
	// a stream. Its type is integrity_error, not upstream_error: the
	// answer stopped short while looking like success up to the cut, and
	// the client must not take the partial text for the whole.
	CodeStreamTruncated Code = "stream_truncated"
	// CodeResponseAmbiguous: the upstream body holds duplicate, case- or
	// escape-variant copies of a member custody checks, so custody and the
	// client could read two different answers from one body.
	CodeResponseAmbiguous         Code = "response_ambiguous"
	CodeUpstreamErrorAsSuccess    Code = "upstream_error_as_success"
	CodeCrossRequestContamination Code = "cross_request_contamination"
	// CodeCacheShared: the upstream's prompt cache served one tenant's
	// prefix to another (cached_tokens this tenant could not have cached,
	// or the cache canary's test).
	CodeCacheShared          Code = "cache_shared"
	CodeFallbackNotPermitted Code = "fallback_not_permitted"
	CodeRouteQuarantined     Code = "route_quarantined"
	CodeLedgerUnavailable    Code = "ledger_unavailable"
	// CodeIndexUnavailable: the index does not answer, so a check that
	// needs it cannot run (refused when checks.on_index_unavailable is
	// reject) or an admin query cannot be answered.
	CodeIndexUnavailable    Code = "index_unavailable"
	CodeUpstreamTimeout     Code = "upstream_timeout"
	CodeUpstreamUnavailable Code = "upstream_unavailable"
	// CodeUpstreamRejected: the upstream refused the request with a 4xx that
	// the request itself caused; its status is passed through.
	CodeUpstreamRejected Code = "upstream_rejected"
	// CodeClientClosed: the client went away before the answer was complete.
	CodeClientClosed Code = "client_closed"
	CodeInternal     Code = "internal_error"
)

// Error types of the OpenAI error shape.
const (
	TypeIntegrity      = "integrity_error"
	TypeInvalidRequest = "invalid_request_error"
	TypePolicy         = "policy_error"
	TypeUpstream       = "upstream_error"
	TypeAuthentication = "authentication_error"
)

type codeInfo struct {
	status int
	typ    string
}

var codes = map[Code]codeInfo{
	CodeContextLengthExceeded:     {http.StatusBadRequest, TypeInvalidRequest},
	CodeInvalidRequest:            {http.StatusBadRequest, TypeInvalidRequest},
	CodeRequestTooLarge:           {http.StatusRequestEntityTooLarge, TypeInvalidRequest},
	CodeUnauthorized:              {http.StatusUnauthorized, TypeAuthentication},
	CodeForbidden:                 {http.StatusForbidden, TypeAuthentication},
	CodeNotFound:                  {http.StatusNotFound, TypeInvalidRequest},
	CodeMethodNotAllowed:          {http.StatusMethodNotAllowed, TypeInvalidRequest},
	CodeRateLimited:               {http.StatusTooManyRequests, TypePolicy},
	CodePromptTokenMismatch:       {http.StatusBadGateway, TypeIntegrity},
	CodeModelMismatch:             {http.StatusBadGateway, TypeIntegrity},
	CodeRequestIDMismatch:         {http.StatusBadGateway, TypeIntegrity},
	CodeResponseReplayed:          {http.StatusBadGateway, TypeIntegrity},
	CodeStreamInconsistent:        {http.StatusBadGateway, TypeIntegrity},
	CodeStreamTruncated:           {http.StatusBadGateway, TypeIntegrity},
	CodeResponseAmbiguous:         {http.StatusBadGateway, TypeIntegrity},
	CodeUpstreamErrorAsSuccess:    {http.StatusBadGateway, TypeIntegrity},
	CodeCrossRequestContamination: {http.StatusBadGateway, TypeIntegrity},
	CodeCacheShared:               {http.StatusBadGateway, TypeIntegrity},
	CodeFallbackNotPermitted:      {http.StatusServiceUnavailable, TypePolicy},
	CodeRouteQuarantined:          {http.StatusServiceUnavailable, TypePolicy},
	CodeLedgerUnavailable:         {http.StatusServiceUnavailable, TypeIntegrity},
	CodeIndexUnavailable:          {http.StatusServiceUnavailable, TypePolicy},
	CodeUpstreamTimeout:           {http.StatusGatewayTimeout, TypeUpstream},
	CodeUpstreamUnavailable:       {http.StatusBadGateway, TypeUpstream},
	CodeUpstreamRejected:          {http.StatusBadRequest, TypeUpstream},
	CodeClientClosed:              {499, TypeInvalidRequest},
	CodeInternal:                  {http.StatusInternalServerError, TypeUpstream},
}

// Status is the HTTP status that goes with the code.
func (c Code) Status() int {
	if i, ok := codes[c]; ok {
		return i.status
	}
	return http.StatusInternalServerError
}

// Type is the OpenAI error "type" that goes with the code.
func (c Code) Type() string {
	if i, ok := codes[c]; ok {
		return i.typ
	}
	return TypeUpstream
}

// Integrity reports whether the code is the failure of an integrity check
// (as opposed to a bad request, a policy refusal or a transport failure).
func (c Code) Integrity() bool { return c.Type() == TypeIntegrity && c != CodeLedgerUnavailable }

// Error is an error that carries a Code. Message is what the client sees:
// it must never hold a secret, an upstream's body or a stack trace. Err is
// the cause, for the operator's log only.
type Error struct {
	Code    Code
	Message string
	Param   string
	// HTTPStatus overrides Code.Status() when non-zero (an upstream 4xx
	// passed through keeps its own status).
	HTTPStatus int
	// RetryAfter, in seconds, is sent as Retry-After when positive.
	RetryAfter int
	Err        error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrModelMismatch) true for any *Error with that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Code == e.Code
}

// Status is the HTTP status to send.
func (e *Error) Status() int {
	if e.HTTPStatus != 0 {
		return e.HTTPStatus
	}
	return e.Code.Status()
}

// Errorf makes an *Error with a client-visible message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap makes an *Error whose cause is err (kept for the operator's log).
func Wrap(code Code, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// CodeOf returns the code of the first *Error in err's chain, or
// CodeInternal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Sentinels, one per code, for errors.Is.
var (
	ErrContextLengthExceeded     = &Error{Code: CodeContextLengthExceeded}
	ErrInvalidRequest            = &Error{Code: CodeInvalidRequest}
	ErrRequestTooLarge           = &Error{Code: CodeRequestTooLarge}
	ErrUnauthorized              = &Error{Code: CodeUnauthorized}
	ErrForbidden                 = &Error{Code: CodeForbidden}
	ErrNotFound                  = &Error{Code: CodeNotFound}
	ErrRateLimited               = &Error{Code: CodeRateLimited}
	ErrPromptTokenMismatch       = &Error{Code: CodePromptTokenMismatch}
	ErrModelMismatch             = &Error{Code: CodeModelMismatch}
	ErrRequestIDMismatch         = &Error{Code: CodeRequestIDMismatch}
	ErrResponseReplayed          = &Error{Code: CodeResponseReplayed}
	ErrStreamInconsistent        = &Error{Code: CodeStreamInconsistent}
	ErrStreamTruncated           = &Error{Code: CodeStreamTruncated}
	ErrResponseAmbiguous         = &Error{Code: CodeResponseAmbiguous}
	ErrUpstreamErrorAsSuccess    = &Error{Code: CodeUpstreamErrorAsSuccess}
	ErrCrossRequestContamination = &Error{Code: CodeCrossRequestContamination}
	ErrCacheShared               = &Error{Code: CodeCacheShared}
	ErrFallbackNotPermitted      = &Error{Code: CodeFallbackNotPermitted}
	ErrRouteQuarantined          = &Error{Code: CodeRouteQuarantined}
	ErrLedgerUnavailable         = &Error{Code: CodeLedgerUnavailable}
	ErrUpstreamTimeout           = &Error{Code: CodeUpstreamTimeout}
	ErrUpstreamUnavailable       = &Error{Code: CodeUpstreamUnavailable}
)
