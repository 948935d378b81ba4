package contamination

import (
	"fmt"

	"github.com/custody-gateway/custody/gateway"
)

// Gateway adapts a Detector to the gateway: it is the gateway.Contamination
// the composition root injects (gateway.Options.Contamination).
type Gateway struct{ D *Detector }

// Admit fingerprints and remembers the prompt; its own text (and any
// canary secret it carries) is exempt from its own scan.
func (d Gateway) Admit(requestID, tenant, prompt string) gateway.Scanner {
	p := d.D.Fingerprint(prompt)
	d.D.Remember(requestID, tenant, p)
	return &detectorScanner{first: d.D.NewTenantScanner(requestID, tenant, p, prompt)}
}

// maxPlaces bounds the scanners of one response (one per place of text:
// a stream of many tool calls or logprob ranks); texts of places past it
// are scanned by one more, each as a whole text of its own.
const maxPlaces = 64

// detectorScanner scans each place of a response with its own
// Scanner (Fork of the first), so that texts a client reads
// apart (the content, the reasoning, each tool call's arguments) are
// scanned apart, and the deltas of one are scanned as one text however
// they are interleaved with the others'.
type detectorScanner struct {
	first  *Scanner
	places map[gateway.Place]*Scanner
	// rest scans the texts of places past maxPlaces, a newline between
	// two places' texts so that their words never join.
	rest     *Scanner
	restLast gateway.Place
}

func (s *detectorScanner) Write(t gateway.Text) {
	sc, ok := s.places[t.Place]
	switch {
	case t.Whole:
		s.writeRest(t)
		return
	case ok:
	case s.places == nil:
		sc = s.first
		s.places = map[gateway.Place]*Scanner{t.Place: sc}
	case len(s.places) < maxPlaces:
		sc = s.first.Fork()
		s.places[t.Place] = sc
	default:
		s.writeRest(t)
		return
	}
	sc.WriteString(t.S)
}

// writeRest scans a whole text, or one of a place past maxPlaces.
func (s *detectorScanner) writeRest(t gateway.Text) {
	if s.rest == nil {
		s.rest = s.first.Fork()
	} else if t.Whole || t.Place != s.restLast {
		s.rest.WriteString("\n")
	}
	s.restLast = t.Place
	s.rest.WriteString(t.S)
}

func (s *detectorScanner) each(fn func(*Scanner)) {
	fn(s.first)
	for _, sc := range s.places {
		if sc != s.first {
			fn(sc)
		}
	}
	if s.rest != nil {
		fn(s.rest)
	}
}

// End ends every place's text. (The gateway has already written the
// decoded JSON arguments, as whole texts.)
func (s *detectorScanner) End() {
	s.each((*Scanner).End)
}

func (s *detectorScanner) Close(learn bool) {
	if learn {
		s.each(func(sc *Scanner) { sc.Close() })
		return
	}
	s.each((*Scanner).Discard)
}

// Finding is the first secret found in any place, else the first
// fingerprint finding.
func (s *detectorScanner) Finding() (gateway.Finding, bool) {
	var best Finding
	found := false
	s.each(func(sc *Scanner) {
		f, ok := sc.Finding()
		if ok && (!found || f.Kind == KindSecret && best.Kind != KindSecret) {
			best, found = f, true
		}
	})
	if !found {
		return gateway.Finding{}, false
	}
	if best.Kind == KindSecret {
		return gateway.Finding{Detail: "canary secret " + best.SecretLabel}, true
	}
	return gateway.Finding{
		Detail: fmt.Sprintf("%d fingerprints of another request", best.Run),
		Source: fmt.Sprintf("request %s of tenant %s", best.SourceRequest, best.SourceTenant),
	}, true
}
