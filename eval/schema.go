package eval

import "github.com/custody-gateway/custody/internal/jsonschema"

// Schema is a json_schema assertion's schema: plain JSON Schema of
// internal/jsonschema's subset (no $ref, no format), whose errors name the
// place and the rule broken, never the answer.
type Schema = jsonschema.Schema

// ParseSchema reads a schema from a suite; an unsupported keyword is an
// error when the suite loads.
func ParseSchema(raw []byte) (*Schema, error) { return jsonschema.Parse(raw) }

// decodeJSON decodes one JSON value, numbers as json.Number, refusing
// trailing data and duplicate members (named when quote is set: a
// suite's own members, never an answer's).
func decodeJSON(raw []byte, quote bool) (any, error) { return jsonschema.Decode(raw, quote) }

// noDuplicates refuses JSON in which an object holds the same member
// twice, exactly or in another case: a suite means one thing.
func noDuplicates(raw []byte, quote bool) error { return jsonschema.NoDuplicates(raw, quote) }
