package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is the subset of JSON Schema (draft 2020-12 keywords) that
// answers of LLMs are checked with: type (a name or a list), enum, const,
// properties, required, additionalProperties (a boolean or a schema),
// items, minItems, maxItems, minLength, maxLength, pattern (RE2), minimum,
// maximum, exclusiveMinimum, exclusiveMaximum, anyOf, and the annotations
// title, description and $schema. Any other keyword is refused when the
// suite loads, so that no constraint the author wrote is silently
// ignored. (Written here rather than taken from a library: the subset is
// small, and its errors must never quote the answer.)
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
}

var schemaTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// maxSchemaDepth bounds nesting, for schemas and the values they check.
const maxSchemaDepth = 32

// ParseSchema reads a schema from JSON.
func ParseSchema(raw []byte) (*Schema, error) {
	v, err := decodeJSON(raw, true)
	if err != nil {
		return nil, err
	}
	return schemaOf(v, "#", 0)
}

func schemaOf(v any, at string, depth int) (*Schema, error) {
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
	s := &Schema{}
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
				if s.Properties[name], err = schemaOf(ps, key+"/"+name, depth+1); err != nil {
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
			s.AdditionalProperties, err = schemaOf(val, key, depth+1)
		case "items":
			s.Items, err = schemaOf(val, key, depth+1)
		case "anyOf":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				err = fmt.Errorf("%s: want a non-empty array of schemas", key)
				break
			}
			for i, sub := range list {
				var ss *Schema
				if ss, err = schemaOf(sub, fmt.Sprintf("%s/%d", key, i), depth+1); err != nil {
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

// decodeJSON decodes one JSON value, numbers as json.Number, refusing
// trailing data and duplicate members (named when quote is set).
func decodeJSON(raw []byte, quote bool) (any, error) {
	if err := noDuplicates(raw, quote); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d.More() {
		return nil, fmt.Errorf("not JSON: data after the value")
	}
	return v, nil
}

// Validate checks a decoded value (numbers as json.Number) against s. The
// error names the place and the rule broken, never the value.
func (s *Schema) Validate(v any) error { return s.validate(v, "$", 0) }

func (s *Schema) validate(v any, at string, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("%s: nested deeper than %d", at, maxSchemaDepth)
	}
	if len(s.Types) > 0 && !slices.ContainsFunc(s.Types, func(t string) bool { return hasType(v, t) }) {
		return fmt.Errorf("%s: want %s, got %s", at, strings.Join(s.Types, " or "), typeName(v))
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, v) }) {
		return fmt.Errorf("%s: not one of the enum's values", at)
	}
	if s.Const != nil && !jsonEqual(*s.Const, v) {
		return fmt.Errorf("%s: not the const value", at)
	}
	if s.AnyOf != nil {
		ok := false
		for _, sub := range s.AnyOf {
			if sub.validate(v, at, depth+1) == nil {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%s: matches none of anyOf", at)
		}
	}
	switch t := v.(type) {
	case string:
		n := utf8.RuneCountInString(t)
		if s.MinLength != nil && n < *s.MinLength {
			return fmt.Errorf("%s: %d characters, want at least %d", at, n, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Errorf("%s: %d characters, want at most %d", at, n, *s.MaxLength)
		}
		if s.Pattern != nil && !s.Pattern.MatchString(t) {
			return fmt.Errorf("%s: does not match the pattern", at)
		}
	case json.Number:
		f, _ := t.Float64()
		switch {
		case s.Minimum != nil && f < *s.Minimum:
			return fmt.Errorf("%s: below the minimum %v", at, *s.Minimum)
		case s.Maximum != nil && f > *s.Maximum:
			return fmt.Errorf("%s: above the maximum %v", at, *s.Maximum)
		case s.ExclMin != nil && f <= *s.ExclMin:
			return fmt.Errorf("%s: not above the exclusive minimum %v", at, *s.ExclMin)
		case s.ExclMax != nil && f >= *s.ExclMax:
			return fmt.Errorf("%s: not below the exclusive maximum %v", at, *s.ExclMax)
		}
	case []any:
		if s.MinItems != nil && len(t) < *s.MinItems {
			return fmt.Errorf("%s: %d items, want at least %d", at, len(t), *s.MinItems)
		}
		if s.MaxItems != nil && len(t) > *s.MaxItems {
			return fmt.Errorf("%s: %d items, want at most %d", at, len(t), *s.MaxItems)
		}
		if s.Items != nil {
			for i, e := range t {
				if err := s.Items.validate(e, fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := t[r]; !ok {
				return fmt.Errorf("%s: required member %q missing", at, r)
			}
		}
		names := make([]string, 0, len(t))
		for k := range t {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			sub, known := s.Properties[k]
			switch {
			case known:
			case s.NoAdditional:
				return fmt.Errorf("%s: member not allowed (additionalProperties is false)", at)
			case s.AdditionalProperties != nil:
				sub = s.AdditionalProperties
			default:
				continue
			}
			if err := sub.validate(t[k], at+"."+memberPath(k), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// memberPath is a member name as a path step: the schema's own names
// are shown, other members by position only (they come from the answer).
func memberPath(k string) string {
	if len(k) <= 64 && plainName.MatchString(k) {
		return k
	}
	return "[member]"
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return "unknown"
}

// jsonEqual compares decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}

// noDuplicates refuses JSON in which an object holds the same member
// twice, exactly or in another case (encoding/json would keep the last,
// or match a field case-insensitively): a suite means one thing.
// Names are quoted when quote is set (a suite's own members), never for
// an answer.
func noDuplicates(raw []byte, quote bool) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	type frame struct {
		obj    bool
		keys   map[string]bool
		expect bool // next token in an object is a key
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("not JSON: %w", err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expect {
			if k, ok := tok.(string); ok {
				lk := strings.ToLower(k)
				if top.keys[lk] {
					if !quote {
						return errors.New("a member appears twice (or in another case)")
					}
					return fmt.Errorf("member %q appears twice (or in another case)", truncate(k, 40))
				}
				top.keys[lk] = true
				top.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.obj {
				top.expect = true
			}
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, expect: true})
			if len(stack) > maxSchemaDepth*2 {
				return fmt.Errorf("nested deeper than %d", maxSchemaDepth*2)
			}
			continue
		case json.Delim('['):
			if top != nil && top.obj {
				top.expect = true
			}
			stack = append(stack, &frame{})
			if len(stack) > maxSchemaDepth*2 {
				return fmt.Errorf("nested deeper than %d", maxSchemaDepth*2)
			}
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.obj {
			top.expect = true // a value was read: a key comes next
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
