package gateway

// Contamination is the cross-request contamination check as the gateway
// uses it: Admit fingerprints a prompt (remembering it, so later
// responses that carry it are caught) and returns a scanner for this
// request's own response.
type Contamination interface {
	Admit(requestID, tenant, prompt string) Scanner
}

// Scanner is fed a response's generated text, chunk by chunk.
type Scanner interface {
	Write(text []byte) (int, error)
	// Finding reports contamination found so far; detail names the
	// source request (never any text).
	Finding() (detail string, found bool)
}
