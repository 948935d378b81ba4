package gateway

import (
	"bytes"
)

// Contamination is the cross-request contamination check as the gateway
// uses it (contamination.Gateway, injected by the composition root; the
// gateway does not import the matcher): Admit fingerprints a prompt (remembering it, so later
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

// argScanner holds, per place, the deltas of JSON the client's
// application decodes (tool call arguments, partial_json), at most
// maxArgs bytes in all: at End, one with an escape is given to the
// scanner decoded too, as whole texts ("\u0073ecret" is "secret" to the
// application), before the scanner's own End.
type argScanner struct {
	Scanner
	args     map[Place][]byte
	argBytes int
}

// maxArgs bounds the argument bytes one response holds for decoding.
const maxArgs = 1 << 20

// jsonDeltaFields are the fields whose deltas join into JSON text.
var jsonDeltaFields = map[string]bool{"tool_calls.function.arguments": true, "function_call.arguments": true,
	"partial_json": true, "response.function_call_arguments.delta": true}

func (s *argScanner) Write(t Text) {
	if !t.Whole && jsonDeltaFields[t.Field] && s.argBytes+len(t.S) <= maxArgs {
		if s.args == nil {
			s.args = map[Place][]byte{}
		}
		s.args[t.Place] = append(s.args[t.Place], t.S...)
		s.argBytes += len(t.S)
	}
	s.Scanner.Write(t)
}

func (s *argScanner) End() {
	for p, b := range s.args {
		if bytes.IndexByte(b, '\\') < 0 {
			continue
		}
		for _, t := range decodeArguments([]Text{{Place: p, S: string(b), Whole: true}}, true)[1:] {
			s.Scanner.Write(t)
		}
	}
	s.args = nil
	s.Scanner.End()
}
