package gateway

import (
	"strings"
	"testing"
)

// TestBadTraceparentStartsNewTrace: custody forwards a client's trace
// only when its traceparent is valid W3C version 00, and never its
// flags beyond "sampled"; a bad one is replaced by a new trace.
func TestBadTraceparentStartsNewTrace(t *testing.T) {
	h := newHarness(t, testConfig)
	const trace = "0af7651916cd43dd8448eb211c80319c"
	for _, c := range []struct {
		name, in  string
		continued bool
	}{
		{"valid, odd flags", "00-" + trace + "-b7ad6b7169203331-ff", true},
		{"flags not hex", "00-" + trace + "-b7ad6b7169203331-zz", false},
		{"uppercase", "00-" + strings.ToUpper(trace) + "-b7ad6b7169203331-01", false},
		{"zero parent", "00-" + trace + "-0000000000000000-01", false},
		{"version 01", "01-" + trace + "-b7ad6b7169203331-01", false},
		{"bad parent", "00-" + trace + "-not-hex-at-all!!-01", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false), "Traceparent", c.in)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			tp := h.primary.last.Load().Header.Get("Traceparent")
			parts := strings.Split(tp, "-")
			if len(parts) != 4 || parts[0] != "00" || len(parts[1]) != 32 || len(parts[2]) != 16 || tp != strings.ToLower(tp) {
				t.Fatalf("sent upstream %q", tp)
			}
			if (parts[1] == trace) != c.continued {
				t.Errorf("client traceparent %q sent upstream as %q", c.in, tp)
			}
			if parts[3] != "01" && parts[3] != "00" {
				t.Errorf("flags %q passed upstream", parts[3])
			}
		})
	}
}
