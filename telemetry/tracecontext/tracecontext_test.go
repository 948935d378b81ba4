package tracecontext

import (
	"strings"
	"testing"
)

const (
	goodTrace  = "0af7651916cd43dd8448eb211c80319c"
	goodParent = "b7ad6b7169203331"
)

// badTraceParents are refused by W3C Trace Context version 00.
var badTraceParents = map[string]string{
	"empty":             "",
	"version 01":        "01-" + goodTrace + "-" + goodParent + "-01",
	"version ff":        "ff-" + goodTrace + "-" + goodParent + "-01",
	"trailing data":     "00-" + goodTrace + "-" + goodParent + "-01-extra",
	"uppercase trace":   "00-" + strings.ToUpper(goodTrace) + "-" + goodParent + "-01",
	"uppercase flags":   "00-" + goodTrace + "-" + goodParent + "-0A",
	"zero trace id":     "00-" + strings.Repeat("0", 32) + "-" + goodParent + "-01",
	"zero parent id":    "00-" + goodTrace + "-" + strings.Repeat("0", 16) + "-01",
	"short trace id":    "00-" + goodTrace[:31] + "-" + goodParent + "-01",
	"one-digit flags":   "00-" + goodTrace + "-" + goodParent + "-1",
	"non-hex flags":     "00-" + goodTrace + "-" + goodParent + "-zz",
	"non-hex parent":    "00-" + goodTrace + "-" + "g7ad6b7169203331" + "-01",
	"wrong separators":  "00_" + goodTrace + "_" + goodParent + "_01",
	"signed hex digits": "00-" + goodTrace + "-" + "+7ad6b7169203331" + "-01",
}

func TestParse(t *testing.T) {
	tp, ok := Parse("00-" + goodTrace + "-" + goodParent + "-03")
	if !ok || tp.Flags != 3 || tp.String() != "00-"+goodTrace+"-"+goodParent+"-03" {
		t.Fatalf("valid traceparent: %v %+v", ok, tp)
	}
	for name, s := range badTraceParents {
		if _, ok := Parse(s); ok {
			t.Errorf("%s: %q accepted", name, s)
		}
	}
}

// TestContinue: a valid traceparent is continued with a new parent
// id and only the sampled flag; anything else (several headers
// included) starts a new, valid trace.
func TestContinue(t *testing.T) {
	got := Continue([]string{"00-" + goodTrace + "-" + goodParent + "-ff"})
	if !strings.HasPrefix(got, "00-"+goodTrace+"-") || strings.Contains(got, goodParent) || !strings.HasSuffix(got, "-01") {
		t.Errorf("continued as %q", got)
	}
	cases := map[string][]string{"two headers": {"00-" + goodTrace + "-" + goodParent + "-01", "00-" + goodTrace + "-" + goodParent + "-01"}}
	for name, s := range badTraceParents {
		cases[name] = []string{s}
	}
	for name, in := range cases {
		got := Continue(in)
		if _, ok := Parse(got); !ok || strings.Contains(strings.ToLower(got), goodTrace) {
			t.Errorf("%s: sent upstream %q, want a new valid trace", name, got)
		}
	}
}
