package tracecontext

import "testing"

// FuzzParse: whatever a client sends, Parse accepts only what prints
// back as itself, and Continue always sends a valid traceparent that
// keeps an accepted trace id.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
		"", "00--", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-ff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, ok := Parse(s)
		if ok && tp.String() != s {
			t.Fatalf("accepted %q, which prints as %q", s, tp.String())
		}
		out, valid := Parse(Continue([]string{s}))
		if !valid {
			t.Fatalf("Continue(%q) sent an invalid traceparent", s)
		}
		if ok && out.TraceID != tp.TraceID || out.Flags&^FlagSampled != 0 {
			t.Fatalf("Continue(%q) = %v", s, out)
		}
	})
}
