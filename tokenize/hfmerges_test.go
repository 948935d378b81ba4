package tokenize

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestMergesDecode(t *testing.T) {
	cases := []struct {
		in   string
		want string // fmt of the pairs, or "error"
	}{
		{`[]`, `[]`},
		{`null`, `[]`},
		{`["a b", "Ġ t"]`, `[{a b} {Ġ t}]`},
		{` [ ["a b", "c"] , ["\u0120", "\"x\\"] ] `, `[{a b c} {Ġ "x\}]`},
		{`["a\tb c"]`, "[{a\tb c}]"}, // an escape: decoded, then cut at the space
		{`["abc"]`, `error`},
		{`["a b c"]`, `error`},
		{`[["a"]]`, `error`},
		{`[["a", "b", "c"]]`, `error`},
		{`[1]`, `error`},
		{`[["a", 1]]`, `error`},
		{`{}`, `error`},
	}
	for _, c := range cases {
		var m struct {
			M hfMerges `json:"m"`
		}
		err := json.Unmarshal([]byte(`{"m": `+c.in+`}`), &m)
		got := "error"
		if err == nil {
			got = fmt.Sprint([]mergePair(m.M))
			if m.M == nil {
				got = "[]"
			}
		}
		if got != c.want {
			t.Errorf("%s: got %s (%v), want %s", c.in, got, err, c.want)
		}
	}
}
