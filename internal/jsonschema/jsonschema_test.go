package jsonschema

import (
	"strings"
	"testing"
)

func compile(t *testing.T, schema string, o Options) *Schema {
	t.Helper()
	v, err := Decode([]byte(schema), true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(v, o)
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

func check(s *Schema, value string) error {
	v, err := Decode([]byte(value), false)
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// The errors of plain use never quote the value; Quote names the
// members the schema does not know, for values that are no secret.
func TestErrorsNeverQuoteTheValueUnlessAsked(t *testing.T) {
	const schema = `{"type":"object","additionalProperties":false,"properties":{"a":{"enum":["x"]},"t":{"type":"string","maxLength":2}}}`
	for _, value := range []string{`{"SECRET":1}`, `{"a":"SECRET"}`, `{"t":"SECRET"}`, `{"a":{"SECRET":1}}`} {
		err := check(compile(t, schema, Options{}), value)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: err = %v, want an error without the value", value, err)
		}
	}
	err := check(compile(t, schema, Options{Quote: true}), `{"Shard":1}`)
	if err == nil || !strings.Contains(err.Error(), `member "Shard" not allowed`) {
		t.Errorf("Quote: err = %v, want the member named", err)
	}
}

// OpenAPI's annotations are a document's keywords, refused in plain JSON
// Schema; an unknown keyword or format, or a $ref outside the schema,
// never compiles (nothing is loaded, no constraint silently ignored);
// $ref, format and the annotations are checked in a document.
func TestDocumentKeywords(t *testing.T) {
	for _, s := range []string{`{"example":1}`, `{"format":"nonesuch"}`, `{"patternProps":{}}`} {
		if _, err := Parse([]byte(s)); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("Parse(%s) = %v, want not supported", s, err)
		}
	}
	for _, s := range []string{`{"$ref":"#/x"}`, `{"$ref":"other.json#/x"}`, `{"$ref":"file:///etc/passwd"}`, `{"$ref":"https://example.com/s.json"}`} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("Parse(%s) compiled", s)
		}
	}
	root, err := Decode([]byte(`{"defs":{"Node":{"type":"object","required":["at"],"additionalProperties":false,"properties":{
		"at":{"type":"string","format":"date-time","example":"2026-12-01T10:00:00Z"},
		"next":{"anyOf":[{"$ref":"#/defs/Node"},{"type":"null"}]}}}}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(map[string]any{"$ref": "#/defs/Node"}, Options{Root: root, OpenAPI: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := check(s, `{"at":"2026-12-01T10:00:00Z","next":{"at":"2026-12-01T10:00:01.5Z","next":null}}`); err != nil {
		t.Errorf("a valid recursive value refused: %v", err)
	}
	for value, want := range map[string]string{
		`{"at":"2026-12-01T10:00:00Z","next":{"at":"yesterday","next":null}}`: "$.next: matches none of anyOf ($.next.at: not an RFC 3339 time",
		`{"at":"2026-12-01T10:00:00Z","next":{"next":null}}`:                  `required member "at" missing`,
	} {
		if err := check(s, value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", value, err, want)
		}
	}
	for _, bad := range []string{`{"$ref":"#/defs/Nothing"}`, `{"$ref":"other.json#/x"}`, `{"format":"nonesuch"}`} {
		v, _ := Decode([]byte(bad), true)
		if _, err := Compile(v, Options{Root: root, OpenAPI: true}); err == nil {
			t.Errorf("Compile(%s) succeeded", bad)
		}
	}
}

// A client's schema is JSON Schema as written: unknown keywords are
// annotations, but nothing outside it is loaded.
func TestLenient(t *testing.T) {
	s, err := ParseLenient([]byte(`{"type":"object","strict":true,"x-vendor":{"a":1},"properties":{"n":{"type":"integer","format":"nonesuch"}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := check(s, `{"n":3}`); err != nil {
		t.Errorf("valid value refused: %v", err)
	}
	if err := check(s, `{"m":3}`); err == nil || !strings.Contains(err.Error(), `required member "n" missing`) {
		t.Errorf("err = %v", err)
	}
	if _, err := ParseLenient([]byte(`{"$ref":"file:///etc/passwd"}`)); err == nil {
		t.Errorf("a file $ref compiled")
	}
}

// The vocabulary the hand-written subset lacked is now checked.
func TestFullVocabulary(t *testing.T) {
	for _, tc := range []struct{ schema, good, bad, want string }{
		{`{"oneOf":[{"type":"integer"},{"type":"string"}]}`, `1`, `true`, "none of oneOf"},
		{`{"type":"array","uniqueItems":true}`, `[1,2]`, `[1,1]`, "not unique"},
		{`{"patternProperties":{"^x":{"type":"integer"}}}`, `{"xa":1}`, `{"xa":"s"}`, "want integer"},
		{`{"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":1}`, `{"a":"s"}`, "$.a: want integer"},
		{`{"type":"number","multipleOf":2}`, `4`, `3`, "multiple"},
		{`{"not":{"type":"string"}}`, `1`, `"s"`, "not"},
	} {
		s := compile(t, tc.schema, Options{})
		if err := check(s, tc.good); err != nil {
			t.Errorf("%s: %s refused: %v", tc.schema, tc.good, err)
		}
		if err := check(s, tc.bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s: err = %v, want %q", tc.schema, tc.bad, err, tc.want)
		}
	}
}
