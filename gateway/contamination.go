package gateway

import (
	"bytes"
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

// Scanner is fed every text of a response that a client receives (each
// Text at its Place: texts of one place continue each other, texts of
// different places never run together), chunk by chunk.
type Scanner interface {
	Write(t Text)
	// End ends the response's text: its last word is scanned. The
	// verdict is taken after End, never before.
	End()
	// Finding reports contamination found so far (final after End).
	Finding() (Finding, bool)
	// Close finishes the scanner; learn says the detector may learn its
	// stock phrases from the response (it was served, or refused for its
	// contamination only: contamination.Scanner.Close bounds what that
	// teaches).
	Close(learn bool)
}

// Finding is a contamination finding. Detail is what the tenant's own
// record may say (the leaf, the receipt, the headers): never which
// request or tenant the text came from, which would tell the tenant that
// another tenant sent it (a membership oracle). Source is for the
// operator's log only.
type Finding struct {
	Detail string
	Source string // "request <id> of tenant <t>"; "" for a canary secret
}

// Detector adapts a contamination.Detector to the gateway.
type Detector struct{ D *contamination.Detector }

// Admit fingerprints and remembers the prompt; its own text (and any
// canary secret it carries) is exempt from its own scan.
func (d Detector) Admit(requestID, tenant, prompt string) Scanner {
	p := d.D.Fingerprint(prompt)
	d.D.Remember(requestID, tenant, p)
	return &detectorScanner{first: d.D.NewTenantScanner(requestID, tenant, p, prompt)}
}

// maxPlaces bounds the scanners of one response (one per place of text:
// a stream of many tool calls or logprob ranks); texts of places past it
// are scanned by one more, each as a whole text of its own.
const maxPlaces = 64

// detectorScanner scans each place of a response with its own
// contamination.Scanner (Fork of the first), so that texts a client reads
// apart (the content, the reasoning, each tool call's arguments) are
// scanned apart, and the deltas of one are scanned as one text however
// they are interleaved with the others'.
type detectorScanner struct {
	first  *contamination.Scanner
	places map[Place]*contamination.Scanner
	// rest scans the texts of places past maxPlaces, a newline between
	// two places' texts so that their words never join.
	rest     *contamination.Scanner
	restLast Place
	// args holds, per place, the deltas of JSON the client's application
	// decodes (tool call arguments, partial_json), at most maxArgs bytes
	// in all: at End, one with an escape is scanned decoded too
	// ("\u0073ecret" is "secret" to the application).
	args     map[Place][]byte
	argBytes int
}

// maxArgs bounds the argument bytes one response holds for decoding.
const maxArgs = 1 << 20

// jsonDeltaFields are the fields whose deltas join into JSON text.
var jsonDeltaFields = map[string]bool{"tool_calls.function.arguments": true, "function_call.arguments": true,
	"partial_json": true, "response.function_call_arguments.delta": true}

func (s *detectorScanner) Write(t Text) {
	if !t.Whole && jsonDeltaFields[t.Field] && s.argBytes+len(t.S) <= maxArgs {
		if s.args == nil {
			s.args = map[Place][]byte{}
		}
		s.args[t.Place] = append(s.args[t.Place], t.S...)
		s.argBytes += len(t.S)
	}
	sc, ok := s.places[t.Place]
	switch {
	case t.Whole:
		s.writeRest(t)
		return
	case ok:
	case s.places == nil:
		sc = s.first
		s.places = map[Place]*contamination.Scanner{t.Place: sc}
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
func (s *detectorScanner) writeRest(t Text) {
	if s.rest == nil {
		s.rest = s.first.Fork()
	} else if t.Whole || t.Place != s.restLast {
		s.rest.WriteString("\n")
	}
	s.restLast = t.Place
	s.rest.WriteString(t.S)
}

func (s *detectorScanner) each(fn func(*contamination.Scanner)) {
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

func (s *detectorScanner) End() {
	for p, b := range s.args {
		if bytes.IndexByte(b, '\\') < 0 {
			continue
		}
		for _, t := range decodeArguments([]Text{{Place: p, S: string(b), Whole: true}}, true)[1:] {
			s.writeRest(t)
		}
	}
	s.args = nil
	s.each((*contamination.Scanner).End)
}

func (s *detectorScanner) Close(learn bool) {
	if learn {
		s.each(func(sc *contamination.Scanner) { sc.Close() })
		return
	}
	s.each((*contamination.Scanner).Discard)
}

// Finding is the first secret found in any place, else the first
// fingerprint finding.
func (s *detectorScanner) Finding() (Finding, bool) {
	var best contamination.Finding
	found := false
	s.each(func(sc *contamination.Scanner) {
		f, ok := sc.Finding()
		if ok && (!found || f.Kind == contamination.KindSecret && best.Kind != contamination.KindSecret) {
			best, found = f, true
		}
	})
	if !found {
		return Finding{}, false
	}
	if best.Kind == contamination.KindSecret {
		return Finding{Detail: "canary secret " + best.SecretLabel}, true
	}
	return Finding{
		Detail: fmt.Sprintf("%d fingerprints of another request", best.Run),
		Source: fmt.Sprintf("request %s of tenant %s", best.SourceRequest, best.SourceTenant),
	}, true
}
