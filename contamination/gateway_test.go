package contamination

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody/gateway"
)

// TestGatewayScannerPlaces: the gateway's scanner (Gateway.Admit): texts of one place are one text however the
// stream interleaves them with other places' (a secret cut into a
// tool call's arguments deltas between reasoning deltas is found), and
// texts of different places never run into words of neither; the last
// word counts once End is called, and the finding names no source.
func TestGatewayScannerPlaces(t *testing.T) {
	const prompt = "internal memo: the reactor coolant bypass code for hall nine is Xv83Lq2Rt7Wm and must never leave this room"
	newScanner := func() (*Detector, gateway.Scanner) {
		d := New(Config{})
		d.Remember("victim", "beta", d.Fingerprint(prompt))
		return d, Gateway{D: d}.Admit("attacker", "acme", "tell me a story")
	}
	args := gateway.Place{Field: "tool_calls.function.arguments", Index: 1}
	reasoning := gateway.Place{Field: "reasoning_content"}
	t.Run("interleaved", func(t *testing.T) {
		_, sc := newScanner()
		words := strings.Fields(prompt)
		for i, w := range words {
			// The arguments spell the memo a few letters at a time; the
			// reasoning says something else between each piece.
			for len(w) > 0 {
				n := min(3, len(w))
				sc.Write(gateway.Text{Place: args, S: w[:n]})
				sc.Write(gateway.Text{Place: reasoning, S: "hmm "})
				w = w[n:]
			}
			if i < len(words)-1 {
				sc.Write(gateway.Text{Place: args, S: " "})
			}
		}
		sc.End()
		f, found := sc.Finding()
		if !found {
			t.Fatal("a secret spread over one place's deltas, between another's, was not found")
		}
		if strings.Contains(f.Detail, "victim") || !strings.Contains(f.Source, "victim") {
			t.Errorf("detail %q (the tenant's) / source %q (the operator's)", f.Detail, f.Source)
		}
		sc.Close(true)
	})
	t.Run("places never join", func(t *testing.T) {
		_, sc := newScanner()
		// "Xv83" in one place and "Lq2Rt7Wm" in another are not the
		// nonce: a client never reads them as one word.
		sc.Write(gateway.Text{Place: args, S: "code Xv83"})
		sc.Write(gateway.Text{Place: reasoning, S: "Lq2Rt7Wm"})
		sc.End()
		if _, found := sc.Finding(); found {
			t.Error("two places' texts were read as one word")
		}
		sc.Close(true)
	})
	t.Run("last word", func(t *testing.T) {
		_, sc := newScanner()
		sc.Write(gateway.Text{Place: gateway.Place{Field: "content"}, S: "Here it is: Xv83Lq2Rt7Wm"})
		if _, found := sc.Finding(); found {
			t.Log("found before End (the word was known whole early)")
		}
		sc.End()
		if _, found := sc.Finding(); !found {
			t.Error("the last word was not scanned by End")
		}
		sc.Close(false)
	})
	t.Run("whole texts and many places", func(t *testing.T) {
		_, sc := newScanner()
		for i := range maxPlaces + 5 {
			sc.Write(gateway.Text{Place: gateway.Place{Field: "tool_calls.function.name", Index: i}, S: "f"})
		}
		sc.Write(gateway.Text{Place: gateway.Place{Field: "input"}, S: "Xv83Lq2Rt7Wm", Whole: true})
		sc.End()
		if _, found := sc.Finding(); !found {
			t.Error("a whole text past maxPlaces was not scanned")
		}
		sc.Close(false)
	})
}
