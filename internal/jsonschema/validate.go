package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

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
	if s.Ref != nil {
		if err := s.Ref.validate(v, at, depth+1); err != nil {
			return err
		}
	}
	if s.AnyOf != nil {
		var why []string
		for _, sub := range s.AnyOf {
			err := sub.validate(v, at, depth+1)
			if err == nil {
				why = nil
				break
			}
			why = append(why, err.Error())
		}
		if why != nil {
			return fmt.Errorf("%s: matches none of anyOf (%s)", at, strings.Join(why, "; "))
		}
		if len(s.AnyOf) == 0 {
			return fmt.Errorf("%s: the schema allows nothing", at)
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
		if _, err := time.Parse(time.RFC3339Nano, t); s.DateTime && err != nil {
			return fmt.Errorf("%s: not an RFC 3339 time", at)
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
			case s.NoAdditional && s.quote:
				return fmt.Errorf("%s: member %q not allowed (additionalProperties is false)", at, Truncate(k, 40))
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
