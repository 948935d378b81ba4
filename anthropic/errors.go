package anthropic

import (
	"encoding/json"
	"net/http"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/sse"
)

// ErrorType is the Anthropic error type of an HTTP status.
func ErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529, http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= 400 && status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

type errorEnvelope struct {
	Type  string      `json:"type"`
	Error errorObject `json:"error"`
}

type errorObject struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Details carries error_code thread_not_found (ThreadNotFound), on
	// which the SDKs resend the whole conversation.
	Details map[string]string `json:"details,omitempty"`
}

// ErrorBody is the Anthropic error shape of a custody error:
// {"type":"error","error":{"type":...,"message":"<code>: ..."}}. The
// message starts with custody's code, the one name of the outcome, and
// names the param when there is one.
func ErrorBody(e *custody.Error) []byte {
	msg := string(e.Code) + ": " + e.Message
	if e.Param != "" {
		msg += " (param: " + e.Param + ")"
	}
	obj := errorObject{Type: ErrorType(e.Status()), Message: msg}
	if e.Code == custody.CodeNotFound && e.Param == "thread" {
		obj.Details = map[string]string{"error_code": "thread_not_found"}
	}
	b, _ := json.Marshal(errorEnvelope{"error", obj})
	return b
}

// ErrorEvent is a custody error as the Messages stream event that ends a
// stream already started.
func ErrorEvent(e *custody.Error) []byte {
	return sse.AppendEvent(nil, "error", json.RawMessage(ErrorBody(e)))
}
