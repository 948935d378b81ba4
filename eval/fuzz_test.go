package eval

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzParse: no suite file makes the loader panic or hang; a refused one
// is named FILE:LINE, an accepted one has cases that can be sent and
// checked. Seeded from testdata/.
func FuzzParse(f *testing.F) {
	data, err := os.ReadFile("testdata/support.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	for _, line := range bytes.Split(data, []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"id":"a","prompt":"p","assert":{"json_schema":{"anyOf":[{"items":{"items":{}}}]}}}`))
	f.Add([]byte(`{"id":"a","prompt":"p","assert":{"contains":"x"},"ID":"b"}`))
	f.Add([]byte("{\"id\":\"a\"}\n\n\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := Parse("f.jsonl", data)
		if err != nil {
			if !strings.HasPrefix(strings.SplitN(err.Error(), "\n", 2)[1], "f.jsonl:") {
				t.Fatalf("error not named FILE:LINE: %v", err)
			}
			return
		}
		for _, c := range cases {
			if c.ID == "" || len(c.Request.Messages) == 0 || c.Line < 1 {
				t.Fatalf("accepted a case without id or messages: %+v", c)
			}
			if _, err := c.Request.Body("m"); err != nil {
				t.Fatalf("an accepted case cannot be sent: %v", err)
			}
			c.Assert.Check(`{"a":[1,"b",null]}`, []toolCall{{"f", `{"x":1}`}}, 0)
		}
	})
}

// FuzzSchemaValidate: a schema check of any answer never panics.
func FuzzSchemaValidate(f *testing.F) {
	f.Add([]byte(`{"type":"object","required":["a"],"properties":{"a":{"type":"array","items":{"type":"integer"}}}}`), []byte(`{"a":[1,2]}`))
	f.Add([]byte(`{"anyOf":[{"const":1},{"enum":[[1],{"a":null}]}]}`), []byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`))
	f.Fuzz(func(t *testing.T, schema, answer []byte) {
		s, err := ParseSchema(schema)
		if err != nil {
			return
		}
		if v, err := decodeJSON(answer, false); err == nil {
			s.Validate(v)
		}
	})
}
