package custody

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// Code is the one name of an outcome: see the package documentation.
type Code string

// The codes of docs/checks.md (Every outcome), including the few custody adds (rate_limited, forbidden,
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
	CodeCacheShared Code = "cache_shared"
	// The contract codes: the answer breaks what the request asked for,
	// one code per clause (check/contract.go; docs/checks.md's contract
	// table gives each clause, its code and its default).
	CodeContractToolUnknown       Code = "contract_tool_unknown"        // a call of a tool the request did not declare
	CodeContractArgumentsInvalid  Code = "contract_arguments_invalid"   // arguments not one JSON object, or breaking a non-strict tool's schema
	CodeContractSchemaInvalid     Code = "contract_schema_invalid"      // output breaking a strict schema (tool or json_schema)
	CodeContractToolChoiceIgnored Code = "contract_tool_choice_ignored" // tool_choice or parallel_tool_calls not honoured
	CodeContractFormatInvalid     Code = "contract_format_invalid"      // text where response_format required JSON, or a non-strict json_schema broken
	CodeContractLimitExceeded     Code = "contract_limit_exceeded"      // more completion tokens than max_tokens
	CodeContractFinishInvalid     Code = "contract_finish_invalid"      // finish_reason inconsistent with the answer (tool_calls without calls, length under the limit)
	CodeContractStopIgnored       Code = "contract_stop_ignored"        // a stop sequence inside a stop-finished text
	CodeContractChoicesInvalid    Code = "contract_choices_invalid"     // not n choices indexed 0..n-1
	CodeContractLogprobsMissing   Code = "contract_logprobs_missing"    // logprobs asked for and absent
	CodeFallbackNotPermitted      Code = "fallback_not_permitted"
	CodeRouteQuarantined          Code = "route_quarantined"
	CodeLedgerUnavailable         Code = "ledger_unavailable"
	// CodeIndexUnavailable: the index does not answer, so a check that
	// needs it cannot run (refused when checks.on_index_unavailable is
	// reject) or an admin query cannot be answered.
	CodeIndexUnavailable    Code = "index_unavailable"
	CodeUpstreamTimeout     Code = "upstream_timeout"
	CodeUpstreamUnavailable Code = "upstream_unavailable"
	// CodeUpstreamRejected: the upstream refused the request with a 4xx that
	// the request itself caused; its status is passed through.
	CodeUpstreamRejected Code = "upstream_rejected"
	// CodeResponseTooLarge: the upstream's answer is over custody's memory
	// bounds (limits.max_response_bytes for a plain body,
	// limits.max_event_bytes for one event of a stream,
	// limits.max_stream_bytes for a whole stream). Refused, never
	// truncated.
	CodeResponseTooLarge Code = "response_too_large"
	// CodeOverloaded: the process-wide budget of answers held in memory
	// (limits.max_inflight_bytes) had no room within a second; retry
	// after Retry-After.
	CodeOverloaded Code = "overloaded"
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

// OutcomeRow is one row of the outcome table: a code, the check whose
// outcome it is (the name before "=" in Custody-Checks), the HTTP status
// and the error type the client gets.
type OutcomeRow struct {
	Code   Code
	Check  string
	Status int
	Type   string
}

// outcomes is the one table of outcomes. The error writer (status and
// type), the Custody-Checks header and the leaf (check=code, through
// Code.Check), custody_check_failures_total{code}, the index and the
// traces (Transaction.Codes) all read their words from it, and
// docs/checks.md lists every row (a test holds it to that).
var outcomes = []OutcomeRow{
	{CodeContextLengthExceeded, CheckCapacity, http.StatusBadRequest, TypeInvalidRequest},
	{CodeInvalidRequest, CheckRequest, http.StatusBadRequest, TypeInvalidRequest},
	{CodeRequestTooLarge, CheckRequest, http.StatusRequestEntityTooLarge, TypeInvalidRequest},
	{CodeNotFound, CheckRequest, http.StatusNotFound, TypeInvalidRequest},
	{CodeMethodNotAllowed, CheckRequest, http.StatusMethodNotAllowed, TypeInvalidRequest},
	{CodeUnauthorized, CheckAuth, http.StatusUnauthorized, TypeAuthentication},
	{CodeForbidden, CheckAuth, http.StatusForbidden, TypeAuthentication},
	{CodeRateLimited, CheckLimit, http.StatusTooManyRequests, TypePolicy},
	{CodePromptTokenMismatch, CheckPromptTokens, http.StatusBadGateway, TypeIntegrity},
	{CodeModelMismatch, CheckModel, http.StatusBadGateway, TypeIntegrity},
	{CodeRequestIDMismatch, CheckRequestID, http.StatusBadGateway, TypeIntegrity},
	{CodeResponseReplayed, CheckReplay, http.StatusBadGateway, TypeIntegrity},
	{CodeStreamInconsistent, CheckStream, http.StatusBadGateway, TypeIntegrity},
	{CodeStreamTruncated, CheckStream, http.StatusBadGateway, TypeIntegrity},
	{CodeResponseAmbiguous, CheckMembers, http.StatusBadGateway, TypeIntegrity},
	{CodeUpstreamErrorAsSuccess, CheckShape, http.StatusBadGateway, TypeIntegrity},
	{CodeCrossRequestContamination, CheckContamination, http.StatusBadGateway, TypeIntegrity},
	{CodeCacheShared, CheckCache, http.StatusBadGateway, TypeIntegrity},
	{CodeContractToolUnknown, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractArgumentsInvalid, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractSchemaInvalid, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractToolChoiceIgnored, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractFormatInvalid, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractLimitExceeded, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractFinishInvalid, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractStopIgnored, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractChoicesInvalid, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeContractLogprobsMissing, CheckContract, http.StatusBadGateway, TypeIntegrity},
	{CodeFallbackNotPermitted, CheckRoute, http.StatusServiceUnavailable, TypePolicy},
	{CodeRouteQuarantined, CheckRoute, http.StatusServiceUnavailable, TypePolicy},
	{CodeLedgerUnavailable, CheckLedger, http.StatusServiceUnavailable, TypeIntegrity},
	{CodeIndexUnavailable, CheckReplay, http.StatusServiceUnavailable, TypePolicy},
	{CodeUpstreamTimeout, CheckUpstream, http.StatusGatewayTimeout, TypeUpstream},
	{CodeUpstreamUnavailable, CheckUpstream, http.StatusBadGateway, TypeUpstream},
	{CodeUpstreamRejected, CheckUpstream, http.StatusBadRequest, TypeUpstream},
	{CodeResponseTooLarge, CheckUpstream, http.StatusBadGateway, TypeUpstream},
	{CodeOverloaded, CheckLimit, http.StatusServiceUnavailable, TypePolicy},
	{CodeClientClosed, CheckClient, 499, TypeInvalidRequest},
	{CodeInternal, CheckInternal, http.StatusInternalServerError, TypeUpstream},
}

// Outcomes is the outcome table, one row per code.
func Outcomes() []OutcomeRow { return slices.Clone(outcomes) }

func (c Code) row() (OutcomeRow, bool) {
	for _, r := range outcomes {
		if r.Code == c {
			return r, true
		}
	}
	return OutcomeRow{}, false
}

// Check is the check whose outcome the code is (CheckInternal for a code
// not in the table).
func (c Code) Check() string {
	if r, ok := c.row(); ok {
		return r.Check
	}
	return CheckInternal
}

// Status is the HTTP status that goes with the code.
func (c Code) Status() int {
	if r, ok := c.row(); ok {
		return r.Status
	}
	return http.StatusInternalServerError
}

// Type is the OpenAI error "type" that goes with the code.
func (c Code) Type() string {
	if r, ok := c.row(); ok {
		return r.Type
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
	ErrResponseTooLarge          = &Error{Code: CodeResponseTooLarge}
	ErrOverloaded                = &Error{Code: CodeOverloaded}
)
