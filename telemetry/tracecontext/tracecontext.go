// Package tracecontext reads and writes W3C Trace Context traceparent
// headers (version 00) strictly. It is apart from package telemetry so
// that the gateway, which telemetry's tests import, can use it without
// the OpenTelemetry SDK.
package tracecontext

import (
	"crypto/rand"
	"encoding/hex"
)

// TraceParent is a W3C Trace Context traceparent of version 00.
type TraceParent struct {
	TraceID  [16]byte
	ParentID [8]byte
	Flags    byte
}

// FlagSampled is the only trace flag custody passes on: the others are
// undefined in version 00 (or, in later levels, claims about the trace id
// custody cannot vouch for).
const FlagSampled = 0x01

// Parse reads a client's traceparent strictly, as W3C Trace
// Context requires of version 00: "00-" 32 lowercase hex (not all zero)
// "-" 16 lowercase hex (not all zero) "-" 2 lowercase hex, nothing else.
// Anything else is not a trace to continue.
func Parse(s string) (TraceParent, bool) {
	var tp TraceParent
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return tp, false
	}
	var flags [1]byte
	if !lowerHex(tp.TraceID[:], s[3:35]) || !lowerHex(tp.ParentID[:], s[36:52]) || !lowerHex(flags[:], s[53:55]) {
		return tp, false
	}
	if tp.TraceID == ([16]byte{}) || tp.ParentID == ([8]byte{}) {
		return tp, false
	}
	tp.Flags = flags[0]
	return tp, true
}

// lowerHex decodes s into dst, refusing uppercase digits.
func lowerHex(dst []byte, s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// String formats tp as a traceparent header value.
func (tp TraceParent) String() string {
	return "00-" + hex.EncodeToString(tp.TraceID[:]) + "-" + hex.EncodeToString(tp.ParentID[:]) + "-" + hex.EncodeToString([]byte{tp.Flags})
}

// Continue is the traceparent custody sends upstream when it does
// not export traces itself: the client's trace id with a fresh parent id
// and only the sampled flag, or a new sampled trace when the client sent
// none, several, or an invalid one.
func Continue(incoming []string) string {
	var out TraceParent
	rand.Read(out.ParentID[:])
	if len(incoming) == 1 {
		if in, ok := Parse(incoming[0]); ok {
			out.TraceID, out.Flags = in.TraceID, in.Flags&FlagSampled
			return out.String()
		}
	}
	rand.Read(out.TraceID[:])
	out.Flags = FlagSampled
	return out.String()
}
