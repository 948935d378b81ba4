// Package jsonschema checks decoded JSON values against JSON Schema
// (draft 2020-12 unless a schema names another with $schema), for every
// caller custody has: the evals' json_schema and tool_call assertions,
// the contract check's tool parameters and response formats (schemas a
// client wrote), and the admin API's OpenAPI 3.1 document
// (internal/openapi), which adds local $ref into the document and
// OpenAPI's annotations.
//
// Validation is github.com/santhosh-tekuri/jsonschema/v6's; what this
// package adds is custody's rules around it:
//   - Errors name the place and the rule broken, never the value: the
//     values checked are answers of models. A member name on the path is
//     shown only when it is a plain identifier, as schemas name members
//     (a member the schema does not allow is named only with
//     Options.Quote, for values that are no secret).
//   - Nothing is ever loaded from outside: a $ref resolves inside the
//     schema (or Options.Root) or the schema does not compile.
//   - A schema custody's own users wrote (a suite, the OpenAPI document)
//     is held to the keywords the library checks: an unknown keyword or
//     format is refused when it compiles, so that no constraint its author
//     wrote is silently ignored. A client's schema (Options.Lenient) is
//     JSON Schema as written, unknown keywords being annotations.
package jsonschema

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	js "github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled schema.
type Schema struct {
	s     *js.Schema
	quote bool
}

// Options say which dialect a schema is written in and whose it is.
type Options struct {
	// Root is the document that local $refs ("#/components/...") point
	// into; nil: they point into the schema itself.
	Root any
	// OpenAPI accepts OpenAPI 3.1's annotations (summary, example) beside
	// JSON Schema's keywords.
	OpenAPI bool
	// Quote lets errors name the members of the value that the schema
	// does not know. Only for values that are no secret (the admin API's
	// own answers, in its tests); never for an answer of a model.
	Quote bool
	// Lenient compiles a schema someone else wrote (a client's tool
	// parameters or response format) as JSON Schema reads it: unknown
	// keywords are annotations and formats are not asserted.
	Lenient bool
}

// maxSchemaDepth bounds the nesting of a schema.
const maxSchemaDepth = 64

// Parse reads a schema of plain JSON Schema from JSON (duplicate members
// refused and named).
func Parse(raw []byte) (*Schema, error) {
	v, err := Decode(raw, true)
	if err != nil {
		return nil, err
	}
	return Compile(v, Options{})
}

// ParseLenient reads a schema a client wrote (Options.Lenient).
func ParseLenient(raw []byte) (*Schema, error) {
	v, err := Decode(raw, false)
	if err != nil {
		return nil, err
	}
	return Compile(v, Options{Lenient: true})
}

// The URL the schema (or Root) is compiled under: never fetched.
const (
	docURL    = "urn:custody:schema"
	targetKey = "x-custody-schema"
)

// Compile compiles a decoded schema (numbers as json.Number).
func Compile(v any, o Options) (*Schema, error) {
	if err := checkKeywords(v, "#", 0, o); err != nil {
		return nil, err
	}
	c := js.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(js.Draft2020)
	if !o.Lenient {
		c.AssertFormat()
	}
	loc := docURL
	doc := v
	if o.Root != nil {
		// The schema is compiled as a member of the document, so that
		// its "#/..." refs resolve there.
		root, ok := o.Root.(map[string]any)
		if !ok {
			return nil, errors.New("#: the document is not an object")
		}
		m := maps.Clone(root)
		m[targetKey] = v
		doc, loc = m, docURL+"#/"+targetKey
	}
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, fmt.Errorf("#: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, compileError(err)
	}
	return &Schema{s: s, quote: o.Quote}, nil
}

// compileError words a compile error without the library's URLs: a
// schema that breaks the metaschema by the first place it does.
func compileError(err error) error {
	var se *js.SchemaValidationError
	var ve *js.ValidationError
	if errors.As(err, &se) && errors.As(se.Err, &ve) {
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		at := "#"
		for _, t := range ve.InstanceLocation {
			at += "/" + t
		}
		return fmt.Errorf("%s: not valid JSON Schema", strings.TrimPrefix(at, "#/"+targetKey))
	}
	msg := strings.ReplaceAll(err.Error(), docURL+"#/"+targetKey, "#")
	msg = strings.ReplaceAll(msg, docURL, "")
	return errors.New(msg)
}

// noLoader refuses every URL: a schema never makes custody read a file
// or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("a $ref outside the schema is not supported")
}

// Keywords whose value is a schema, an object of schemas or an array of
// schemas; then the others the library checks, and the annotations.
var (
	schemaKeywords = set("additionalProperties", "items", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
	schemaMapKeywords  = set("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
	schemaListKeywords = set("anyOf", "allOf", "oneOf", "prefixItems")
	valueKeywords      = set("type", "enum", "const", "required", "minItems", "maxItems", "minLength",
		"maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
		"uniqueItems", "minProperties", "maxProperties", "dependentRequired", "minContains", "maxContains",
		"format", "$ref", "$schema", "$id", "$anchor", "$comment", "title", "description", "default",
		"examples", "readOnly", "writeOnly", "deprecated", "contentEncoding", "contentMediaType")
	openAPIKeywords = set("summary", "example")
	knownFormats    = set("date-time", "date", "time", "duration", "period", "email", "hostname", "ipv4",
		"ipv6", "uri", "uri-reference", "iri", "iri-reference", "uri-template", "uuid", "json-pointer",
		"relative-json-pointer", "regex", "semver")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkKeywords bounds a schema's depth and, unless Lenient, refuses a
// keyword or format the library would not check.
func checkKeywords(v any, at string, depth int, o Options) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("%s: nested deeper than %d", at, maxSchemaDepth)
	}
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool || o.Lenient {
			return nil
		}
		return fmt.Errorf("%s: a schema is an object or a boolean", at)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val, key := m[k], at+"/"+k
		switch {
		case k == "type" && !o.Lenient:
			if err := checkTypes(val, key); err != nil {
				return err
			}
		case schemaKeywords[k]:
			if err := checkKeywords(val, key, depth+1, o); err != nil {
				return err
			}
		case schemaMapKeywords[k]:
			sub, _ := val.(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(sub)) {
				if err := checkKeywords(sub[name], key+"/"+name, depth+1, o); err != nil {
					return err
				}
			}
		case schemaListKeywords[k]:
			list, _ := val.([]any)
			for i, sub := range list {
				if err := checkKeywords(sub, fmt.Sprintf("%s/%d", key, i), depth+1, o); err != nil {
					return err
				}
			}
		case o.Lenient:
		case k == "format":
			if f, _ := val.(string); !knownFormats[f] {
				return fmt.Errorf("%s: format not supported", key)
			}
		case valueKeywords[k]:
		case openAPIKeywords[k] && o.OpenAPI:
		case openAPIKeywords[k]:
			return fmt.Errorf("%s: keyword not supported (an OpenAPI annotation)", key)
		default:
			return fmt.Errorf("%s: keyword not supported", key)
		}
	}
	return nil
}

var schemaTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// checkTypes words the commonest mistake in a suite's schema better than
// the metaschema does.
func checkTypes(v any, at string) error {
	names := []any{v}
	if list, ok := v.([]any); ok {
		names = list
	}
	for _, n := range names {
		s, ok := n.(string)
		if !ok {
			return fmt.Errorf("%s: want a type name or a list of them", at)
		}
		if !slices.Contains(schemaTypes, s) {
			return fmt.Errorf("%s: unknown type %q (want %s)", at, Truncate(s, 40), strings.Join(schemaTypes, ", "))
		}
	}
	return nil
}
