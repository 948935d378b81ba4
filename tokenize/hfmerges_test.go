package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
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

// FuzzMergesDecode compares the hand decoder with encoding/json on
// arbitrary JSON: the same merges, or both refusing.
func FuzzMergesDecode(f *testing.F) {
	for _, s := range []string{`[]`, `["a b","c d"]`, `[["a b","c"],["\u0120","\"x\\"]]`, `["a\tb c"]`, `[["a"]]`, `null`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var ref []any
		if json.Unmarshal([]byte(in), &ref) != nil {
			return // not an array (or not JSON): encoding/json never calls UnmarshalJSON
		}
		var want []mergePair
		ok := true
		for _, e := range ref {
			switch v := e.(type) {
			case string:
				a, b, cut := strings.Cut(v, " ")
				ok = ok && cut && !strings.Contains(b, " ")
				want = append(want, mergePair{a, b})
			case []any:
				if len(v) != 2 {
					ok = false
					continue
				}
				a, oka := v[0].(string)
				b, okb := v[1].(string)
				ok = ok && oka && okb
				want = append(want, mergePair{a, b})
			default:
				ok = false
			}
		}
		var m hfMerges
		err := json.Unmarshal([]byte(in), &m)
		if (err == nil) != ok {
			t.Fatalf("%s: err %v, reference ok %v", in, err, ok)
		}
		if ok && fmt.Sprint([]mergePair(m)) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, reference %v", in, m, want)
		}
	})
}
