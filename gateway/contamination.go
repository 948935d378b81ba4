package gateway

import (
	"fmt"

	"github.com/custody-gateway/custody/contamination"
)

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
	// Close ends the response (the detector learns the model's stock
	// phrases from it).
	Close() error
}

// Detector adapts a contamination.Detector to the gateway.
type Detector struct{ D *contamination.Detector }

// Admit fingerprints and remembers the prompt; its own text (and any
// canary secret it carries) is exempt from its own scan.
func (d Detector) Admit(requestID, tenant, prompt string) Scanner {
	p := d.D.Fingerprint(prompt)
	d.D.Remember(requestID, tenant, p)
	return detectorScanner{d.D.NewScanner(requestID, p, prompt)}
}

type detectorScanner struct{ s *contamination.Scanner }

func (s detectorScanner) Write(b []byte) (int, error) { return s.s.Write(b) }
func (s detectorScanner) Close() error                { return s.s.Close() }
func (s detectorScanner) Finding() (string, bool) {
	f, ok := s.s.Finding()
	if !ok {
		return "", false
	}
	if f.Kind == contamination.KindSecret {
		return "canary secret " + f.SecretLabel, true
	}
	return fmt.Sprintf("%d fingerprints of request %s", f.Run, f.SourceRequest), true
}
