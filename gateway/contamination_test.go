package gateway

import (
	"testing"
)

// wholeTexts is a Scanner that keeps the whole texts written to it and
// whether End came after them.
type wholeTexts struct {
	whole    []string
	endAfter bool
}

func (s *wholeTexts) Write(t Text) {
	if t.Whole {
		s.whole, s.endAfter = append(s.whole, t.S), false
	}
}
func (s *wholeTexts) End()                     { s.endAfter = true }
func (s *wholeTexts) Finding() (Finding, bool) { return Finding{}, false }
func (s *wholeTexts) Close(bool)               {}

// TestEscapedArgumentsScanned: streamed JSON arguments with an escape
// reach the contamination scanner decoded too, as a whole text, before
// its End ({"code":"\u0058v83..."} is "Xv83..." to the application),
// whatever matcher the gateway was given.
func TestEscapedArgumentsScanned(t *testing.T) {
	for _, field := range []string{"tool_calls.function.arguments", "partial_json", "response.function_call_arguments.delta"} {
		inner := &wholeTexts{}
		sc := &argScanner{Scanner: inner}
		for _, piece := range []string{`{"co`, `de":"\u00`, `58v83Lq2`, `Rt7Wm"}`} {
			sc.Write(Text{Place: Place{Field: field, Index: 2}, S: piece})
		}
		sc.Write(Text{Place: Place{Field: "content"}, S: `plain \u0058`})
		sc.End()
		found := false
		for _, w := range inner.whole {
			found = found || w == "Xv83Lq2Rt7Wm"
		}
		if !found || !inner.endAfter {
			t.Errorf("%s: the scanner got whole texts %q (End after them: %v), want the decoded nonce before End", field, inner.whole, inner.endAfter)
		}
	}
}
