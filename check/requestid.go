package check

import "github.com/custody-gateway/custody"

// RequestID fails when the upstream echoed a request id other than the
// one custody sent: the response belongs to another request, the mark of
// a desynchronised connection pool or queue between custody and the
// upstream. A missing echo fails too, once the provider is configured to
// echo: a stack that stopped echoing can no longer be checked.
func RequestID(sent, echoed string) error {
	if echoed == "" {
		return custody.Errorf(custody.CodeRequestIDMismatch, "the upstream did not echo the request id")
	}
	if echoed != sent {
		return custody.Errorf(custody.CodeRequestIDMismatch, "the upstream echoed another request's id")
	}
	return nil
}
