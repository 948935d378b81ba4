package openapi

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody/internal/jsonschema"
)

const doc = `{
  "openapi": "3.1.0",
  "paths": {
    "/things/{id}": {"get": {"responses": {
      "200": {"description": "", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
      "default": {"$ref": "#/components/responses/Error"}}}}
  },
  "components": {
    "responses": {"Error": {"description": "", "content": {"application/json": {"schema": {"type": "object", "required": ["error"]}}}}},
    "schemas": {
      "Thing": {"type": "object", "additionalProperties": false, "required": ["id", "at", "n", "tags", "kind", "next", "part"],
        "properties": {
          "id": {"type": "string"},
          "at": {"type": "string", "format": "date-time"},
          "n": {"type": "integer"},
          "ms": {"type": "number"},
          "tags": {"type": "array", "items": {"type": "string"}},
          "kind": {"enum": ["a", "b"]},
          "object": {"const": "thing"},
          "next": {"type": ["string", "null"]},
          "part": {"anyOf": [{"$ref": "#/components/schemas/Part"}, {"type": "null"}]}
        }},
      "Part": {"type": "object", "additionalProperties": false, "required": ["k"], "properties": {"k": {"type": "integer"}}}
    }
  }
}`

func TestValidate(t *testing.T) {
	d, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Response("GET", "/things/42", 200)
	if err != nil {
		t.Fatal(err)
	}
	good := `{"id":"x","at":"2026-12-01T10:00:00.5Z","n":3,"ms":1.5,"tags":["a"],"kind":"a","object":"thing","next":null,"part":{"k":1}}`
	if err := d.ValidateJSON(s, []byte(good)); err != nil {
		t.Errorf("valid document refused: %v", err)
	}
	tests := []struct{ name, from, to, want string }{
		{"unknown member", `"id":"x"`, `"id":"x","Shard":"s"`, `member "Shard"`},
		{"missing member", `"id":"x",`, ``, `required member "id" missing`},
		{"wrong type", `"n":3`, `"n":"3"`, "$.n: want integer, got string"},
		{"fraction for integer", `"n":3`, `"n":3.5`, "$.n"},
		{"not a time", `"2026-12-01T10:00:00.5Z"`, `"yesterday"`, "$.at"},
		{"outside enum", `"kind":"a"`, `"kind":"c"`, "$.kind"},
		{"wrong const", `"object":"thing"`, `"object":"list"`, "$.object"},
		{"item type", `["a"]`, `["a",1]`, "$.tags[1]"},
		{"null where not allowed", `"id":"x"`, `"id":null`, "$.id"},
		{"anyOf: none matches", `"part":{"k":1}`, `"part":"p"`, "$.part: matches none of anyOf"},
		{"anyOf: a member of the ref's object unknown", `{"k":1}`, `{"k":1,"j":2}`, `member "j"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Replace(good, tt.from, tt.to, 1)
			err := d.ValidateJSON(s, []byte(bad))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate(%s) = %v, want an error naming %q", bad, err, tt.want)
			}
		})
	}
	if e, err := d.Response("GET", "/things/42", 404); err != nil || d.ValidateJSON(e, []byte(`{"error":{}}`)) != nil {
		t.Errorf("default response: %v", err)
	}
	if _, err := d.Response("GET", "/nothing", 200); err == nil {
		t.Error("an undocumented path has a schema")
	}
	if _, err := d.Response("POST", "/things/1", 200); err == nil {
		t.Error("an undocumented method has a schema")
	}
}

func TestUnsupportedKeyword(t *testing.T) {
	d, err := Parse([]byte(`{"openapi":"3.1.0","paths":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`{"minProps": 3}`, `{"oneOf": []}`, `{"type":"string","format":"nonesuch"}`, `{"$ref":"#/nowhere"}`} {
		schema, err := jsonschema.Decode([]byte(s), true)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(schema, "x"); err == nil || !strings.HasPrefix(err.Error(), "openapi: ") {
			t.Errorf("schema %s: err = %v, want an error of the document", s, err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{`{}`, `{"openapi":"3.0.3","paths":{}}`, `{"openapi":"3.1.0"}`, `not json`, `{"openapi":"3.1.0","paths":{}} x`} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("Parse(%s) succeeded", s)
		}
	}
}
