package jsonschema

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Validate checks a decoded value (numbers as json.Number) against s. The
// error names the place and the rule broken, never the value.
func (s *Schema) Validate(v any) error {
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *js.ValidationError
	if !errors.As(err, &ve) {
		return errors.New("$: not a decoded JSON value")
	}
	return errors.New(s.explain(ve, v))
}

// explain words the first broken rule of e: the library's own messages
// quote the value, so each kind is worded here.
func (s *Schema) explain(e *js.ValidationError, v any) string {
	at := path(e.InstanceLocation, v)
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		return at + ": matches none of anyOf (" + s.causes(e, v) + ")"
	case *kind.OneOf:
		if k.Subschemas == nil {
			return at + ": matches none of oneOf (" + s.causes(e, v) + ")"
		}
		return at + ": matches more than one of oneOf"
	case *kind.Not:
		return at + ": matches the schema of not"
	case *kind.FalseSchema:
		return at + ": the schema allows nothing here"
	case *kind.Type:
		return fmt.Sprintf("%s: want %s, got %s", at, strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		return at + ": not one of the enum's values"
	case *kind.Const:
		return at + ": not the const value"
	case *kind.Format:
		if k.Want == "date-time" {
			return at + ": not an RFC 3339 time"
		}
		return at + ": not a valid " + k.Want
	case *kind.Required:
		return fmt.Sprintf("%s: required member %q missing", at, Truncate(k.Missing[0], 40))
	case *kind.DependentRequired:
		return fmt.Sprintf("%s: required member %q missing (dependentRequired)", at, Truncate(k.Missing[0], 40))
	case *kind.AdditionalProperties:
		if s.quote && len(k.Properties) > 0 {
			return fmt.Sprintf("%s: member %q not allowed (additionalProperties is false)", at, Truncate(k.Properties[0], 40))
		}
		return at + ": member not allowed (additionalProperties is false)"
	case *kind.PropertyNames:
		return at + ": a member's name breaks propertyNames"
	case *kind.MinProperties:
		return fmt.Sprintf("%s: %d members, want at least %d", at, k.Got, k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("%s: %d members, want at most %d", at, k.Got, k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("%s: %d items, want at least %d", at, k.Got, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("%s: %d items, want at most %d", at, k.Got, k.Want)
	case *kind.UniqueItems:
		return at + ": items not unique"
	case *kind.MinLength:
		return fmt.Sprintf("%s: %d characters, want at least %d", at, k.Got, k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("%s: %d characters, want at most %d", at, k.Got, k.Want)
	case *kind.Pattern:
		return at + ": does not match the pattern"
	case *kind.Minimum:
		return fmt.Sprintf("%s: below the minimum %s", at, k.Want.FloatString(6))
	case *kind.Maximum:
		return fmt.Sprintf("%s: above the maximum %s", at, k.Want.FloatString(6))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s: not above the exclusive minimum %s", at, k.Want.FloatString(6))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s: not below the exclusive maximum %s", at, k.Want.FloatString(6))
	case *kind.MultipleOf:
		return at + ": not a multiple of " + k.Want.FloatString(6)
	}
	if len(e.Causes) > 0 {
		// A group (the schema, a $ref, allOf, properties): its first
		// broken rule.
		return s.explain(e.Causes[0], v)
	}
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		return at + ": breaks " + strings.Join(kp, "/")
	}
	return at + ": invalid"
}

func (s *Schema) causes(e *js.ValidationError, v any) string {
	why := make([]string, 0, len(e.Causes))
	for _, c := range e.Causes {
		why = append(why, s.explain(c, v))
	}
	return strings.Join(why, "; ")
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// path is an instance location as "$.a[0].b", walked through the value
// to tell array indexes from member names. Member names come from the
// answer: only plain identifiers are shown (schemas name their members
// so), others by position only.
func path(loc []string, v any) string {
	var b strings.Builder
	b.WriteByte('$')
	cur := v
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			b.WriteString("[" + strconv.Itoa(i) + "]")
			if i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			if len(tok) <= 64 && plainName.MatchString(tok) {
				b.WriteString("." + tok)
			} else {
				b.WriteString(".[member]")
			}
			cur = c[tok]
		default:
			b.WriteString(".[member]")
			cur = nil
		}
	}
	return b.String()
}
