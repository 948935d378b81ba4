// Package jsonschema checks decoded JSON values against a subset of JSON
// Schema (draft 2020-12 keywords), for two callers with the same needs:
// the evals' json_schema assertion, which checks answers of LLMs and whose
// errors must never quote the answer, and the admin API's OpenAPI 3.1
// document (internal/openapi), which adds local $ref, format date-time
// and OpenAPI's annotations. Any keyword outside the subset is refused
// when the schema compiles, so that no constraint the author wrote is
// silently ignored. (Written here rather than taken from a library: the
// subset is small, and its errors must never quote the value checked.)
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Schema is a compiled schema of the subset: type (a name or a list),
// enum, const, properties, required, additionalProperties (a boolean or a
// schema), items, minItems, maxItems, minLength, maxLength, pattern
// (RE2), minimum, maximum, exclusiveMinimum, exclusiveMaximum, anyOf, and
// the annotations title, description and $schema; with Options.Root,
// local $ref; with Options.OpenAPI, format date-time and the annotations
// summary, example, examples and deprecated.
type Schema struct {
	Types                []string
	Enum                 []any // decoded with json.Number
	Const                *any
	Properties           map[string]*Schema
	Required             []string
	AdditionalProperties *Schema // nil: allowed
	NoAdditional         bool    // additionalProperties: false
	Items                *Schema
	MinItems, MaxItems   *int
	MinLength, MaxLength *int
	Pattern              *regexp.Regexp
	Minimum, Maximum     *float64
	ExclMin, ExclMax     *float64
	AnyOf                []*Schema
	Ref                  *Schema // $ref: checked besides the other keywords
	DateTime             bool    // format: date-time (RFC 3339)
	quote                bool    // Options.Quote
}

// Options say which dialect a schema is written in.
type Options struct {
	// Root is the document that local $refs ("#/components/...") point
	// into; nil: $ref is refused.
	Root any
	// OpenAPI accepts OpenAPI 3.1's keywords besides JSON Schema's: format
	// date-time (other formats are refused) and the annotations summary,
	// example, examples and deprecated.
	OpenAPI bool
	// Quote lets errors name the members of the value that the schema
	// does not know. Only for values that are no secret (the admin API's
	// own answers, in its tests); never for an answer of a model.
	Quote bool
}

// compiler compiles one schema; refs holds every $ref target compiled so
// far, so that a recursive document compiles once.
type compiler struct {
	o    Options
	refs map[string]*Schema
}

var schemaTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// maxSchemaDepth bounds nesting, for schemas and the values they check.
const maxSchemaDepth = 32

// Parse reads a schema of plain JSON Schema from JSON (duplicate members
// refused and named).
func Parse(raw []byte) (*Schema, error) {
	v, err := Decode(raw, true)
	if err != nil {
		return nil, err
	}
	return Compile(v, Options{})
}

// Compile compiles a decoded schema (numbers as json.Number).
func Compile(v any, o Options) (*Schema, error) {
	c := &compiler{o: o, refs: map[string]*Schema{}}
	return c.schemaOf(v, "#", 0)
}

func (c *compiler) schemaOf(v any, at string, depth int) (*Schema, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%s: nested deeper than %d", at, maxSchemaDepth)
	}
	if b, ok := v.(bool); ok {
		if b {
			return &Schema{}, nil
		}
		return &Schema{AnyOf: []*Schema{}}, nil // false: nothing is valid
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema is an object or a boolean", at)
	}
	s := &Schema{quote: c.o.Quote}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val, key := m[k], at+"/"+k
		var err error
		switch k {
		case "$schema", "title", "description":
		case "summary", "example", "examples", "deprecated":
			if !c.o.OpenAPI {
				err = fmt.Errorf("%s: keyword not supported (an OpenAPI annotation)", key)
			}
		case "format":
			if f, _ := val.(string); !c.o.OpenAPI || f != "date-time" {
				err = fmt.Errorf("%s: format not supported (only date-time, in an OpenAPI document)", key)
			}
			s.DateTime = true
		case "$ref":
			s.Ref, err = c.ref(val, key, depth)
		case "type":
			s.Types, err = typesOf(val, key)
		case "enum":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				err = fmt.Errorf("%s: want a non-empty array", key)
			}
			s.Enum = list
		case "const":
			c := val
			s.Const = &c
		case "properties":
			props, ok := val.(map[string]any)
			if !ok {
				err = fmt.Errorf("%s: want an object of schemas", key)
				break
			}
			s.Properties = map[string]*Schema{}
			for name, ps := range props {
				if s.Properties[name], err = c.schemaOf(ps, key+"/"+name, depth+1); err != nil {
					break
				}
			}
		case "required":
			s.Required, err = stringsOf(val, key)
		case "additionalProperties":
			if b, ok := val.(bool); ok {
				s.NoAdditional = !b
				break
			}
			s.AdditionalProperties, err = c.schemaOf(val, key, depth+1)
		case "items":
			s.Items, err = c.schemaOf(val, key, depth+1)
		case "anyOf":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				err = fmt.Errorf("%s: want a non-empty array of schemas", key)
				break
			}
			for i, sub := range list {
				var ss *Schema
				if ss, err = c.schemaOf(sub, fmt.Sprintf("%s/%d", key, i), depth+1); err != nil {
					break
				}
				s.AnyOf = append(s.AnyOf, ss)
			}
		case "minItems":
			s.MinItems, err = countOf(val, key)
		case "maxItems":
			s.MaxItems, err = countOf(val, key)
		case "minLength":
			s.MinLength, err = countOf(val, key)
		case "maxLength":
			s.MaxLength, err = countOf(val, key)
		case "pattern":
			p, ok := val.(string)
			if !ok {
				err = fmt.Errorf("%s: want a string", key)
				break
			}
			if s.Pattern, err = regexp.Compile(p); err != nil {
				err = fmt.Errorf("%s: %w", key, err)
			}
		case "minimum":
			s.Minimum, err = numberOf(val, key)
		case "maximum":
			s.Maximum, err = numberOf(val, key)
		case "exclusiveMinimum":
			s.ExclMin, err = numberOf(val, key)
		case "exclusiveMaximum":
			s.ExclMax, err = numberOf(val, key)
		default:
			err = fmt.Errorf("%s: keyword not supported (supported: type, enum, const, properties, required, additionalProperties, items, minItems, maxItems, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum, exclusiveMaximum, anyOf)", key)
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ref compiles the target of a local $ref, once per target: a $ref met
// again (a recursive document) shares the Schema being compiled.
func (c *compiler) ref(v any, at string, depth int) (*Schema, error) {
	ref, ok := v.(string)
	if !ok || c.o.Root == nil {
		return nil, fmt.Errorf("%s: keyword not supported (a local $ref, in a document)", at)
	}
	if s, ok := c.refs[ref]; ok {
		return s, nil
	}
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("%s: $ref %q is not local", at, ref)
	}
	cur := c.o.Root
	for _, seg := range strings.Split(p, "/") {
		m, _ := cur.(map[string]any)
		if cur, ok = m[seg]; !ok {
			return nil, fmt.Errorf("%s: $ref %q resolves to nothing", at, ref)
		}
	}
	s := &Schema{}
	c.refs[ref] = s
	t, err := c.schemaOf(cur, ref, depth+1)
	if err != nil {
		return nil, err
	}
	*s = *t
	return s, nil
}

func typesOf(v any, at string) ([]string, error) {
	var names []string
	switch t := v.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, e := range t {
			n, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s: want type names", at)
			}
			names = append(names, n)
		}
	default:
		return nil, fmt.Errorf("%s: want a type name or a list of them", at)
	}
	for _, n := range names {
		if !slices.Contains(schemaTypes, n) {
			return nil, fmt.Errorf("%s: unknown type %q (want %s)", at, n, strings.Join(schemaTypes, ", "))
		}
	}
	return names, nil
}

func stringsOf(v any, at string) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array of strings", at)
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want an array of strings", at)
		}
		out = append(out, s)
	}
	return out, nil
}

func countOf(v any, at string) (*int, error) {
	n, ok := v.(json.Number)
	if ok {
		if i, err := strconv.Atoi(n.String()); err == nil && i >= 0 {
			return &i, nil
		}
	}
	return nil, fmt.Errorf("%s: want a whole number, at least 0", at)
}

func numberOf(v any, at string) (*float64, error) {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil && !math.IsInf(f, 0) {
			return &f, nil
		}
	}
	return nil, fmt.Errorf("%s: want a number", at)
}
