package sqlq

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// TestPlaceholders: every argument has its placeholder and no placeholder
// lacks an argument, for each filter alone and all together.
func TestPlaceholders(t *testing.T) {
	now := time.Now()
	all := index.Query{RequestID: "r", Tenant: "t", Model: "m", Provider: "p", Verdict: custody.Rejected,
		Code: custody.CodeModelMismatch, Since: now, Until: now, Limit: 5}
	tests := []struct {
		name   string
		q      index.Query
		cursor *Cursor
		want   []string // fragments the SQL must hold
	}{
		{"none", index.Query{}, nil, []string{"FROM records r ORDER BY r.time_ns DESC"}},
		{"model orders by the term table", index.Query{Model: "m"}, nil, []string{"JOIN record_terms m", "ORDER BY m.time_ns DESC, m.request_id DESC"}},
		{"code orders by the term table", index.Query{Code: "c"}, nil, []string{"JOIN record_terms c", "ORDER BY c.time_ns DESC, c.request_id DESC"}},
		{"code and model", index.Query{Code: "c", Model: "m"}, nil, []string{"JOIN record_terms c", "JOIN record_terms m", "ORDER BY c.time_ns DESC"}},
		{"cursor", index.Query{}, &Cursor{TimeNS: 1, RequestID: "x"}, []string{"r.time_ns < $1 OR (r.time_ns = $1 AND r.request_id < $2)"}},
		{"all", all, &Cursor{TimeNS: 1, RequestID: "x"}, []string{"c.time_ns >= ", "c.time_ns < ", "r.verdict = ", "r.provider = ", "r.tenant = "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, args := SearchSQL(Dialect{Canary: "(canary = 1)"}, &tt.q, tt.cursor)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("SQL lacks %q:\n%s", w, text)
				}
			}
			checkArgs(t, text, args)
		})
	}
	cur := int64(5)
	for _, eq := range []index.EventQuery{{}, {Type: "canary", Since: now}, {Type: "canary", Model: "m", Tenant: "t", Route: "m/p", Code: "c", Since: now, Until: now, Before: 9}} {
		c := &cur
		if eq.Before == 0 {
			c = nil
		}
		text, args := EventsSQL(&eq, c)
		checkArgs(t, text, args)
	}
}

func checkArgs(t *testing.T, text string, args []any) {
	t.Helper()
	for i := 1; i <= len(args); i++ {
		if !strings.Contains(text, fmt.Sprintf("$%d", i)) {
			t.Errorf("argument %d has no placeholder:\n%s", i, text)
		}
	}
	if strings.Contains(text, fmt.Sprintf("$%d", len(args)+1)) {
		t.Errorf("placeholder $%d has no argument:\n%s", len(args)+1, text)
	}
}
