package config

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed default.yaml
var defaultYAML []byte

// Default is the configuration `custody serve` runs with no --config: one
// tenant `local` that needs no key on loopback, the built-in simulator as
// the only upstream.
func Default() (*Config, error) {
	return Parse("(embedded defaults)", defaultYAML, os.LookupEnv)
}

// Load reads, interpolates, parses and validates the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(path, data, os.LookupEnv)
}

// Errors is every problem found in a config file.
type Errors []error

func (e Errors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "\n")
}

// Problem is one bad key.
type Problem struct {
	File, Key, Reason string
}

func (p *Problem) Error() string { return fmt.Sprintf("%s: %s: %s", p.File, p.Key, p.Reason) }

// Parse parses data (named file, for messages) with lookup resolving
// ${VAR}. It returns a validated Config or an Errors listing every problem.
func Parse(file string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, Errors{&Problem{file, "(file)", yamlReason(err)}}
	}
	var errs Errors
	if len(root.Content) > 0 {
		doc := root.Content[0]
		if doc.Kind != yaml.MappingNode {
			return nil, Errors{&Problem{file, "(file)", "the top level must be a mapping of keys"}}
		}
		interpolate(doc, reflect.TypeOf(Config{}), "", file, lookup, &errs)
		checkKeys(doc, reflect.TypeOf(Config{}), "", file, &errs)
	}
	c := &Config{}
	if len(root.Content) > 0 {
		if err := root.Content[0].Decode(c); err != nil {
			var te *yaml.TypeError
			if errors.As(err, &te) {
				for _, m := range te.Errors {
					errs = append(errs, &Problem{file, "(value)", m})
				}
			} else {
				errs = append(errs, &Problem{file, "(file)", yamlReason(err)})
			}
		}
	}
	if len(root.Content) > 0 {
		explicitZeros(root.Content[0], c, file, &errs)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c.applyDefaults()
	if err := c.Validate(file); err != nil {
		return nil, err
	}
	return c, nil
}

func yamlReason(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// interpolate replaces ${VAR} and ${VAR:-default} in every scalar value;
// t is the Go type the node decodes into (nil for an unknown key).
// An unset variable without a default is an error: a missing secret must
// not silently become an empty key.
//
// The parser has already typed every plain scalar by its text, so
// `context_window: ${WINDOW}` is the string "${WINDOW}" until it is
// interpolated here and typed again for its field: a value for a string
// field stays exactly what the variable holds (null, true and 0x10
// included), a value for a number, boolean or duration is read as that
// type, and one that is not is reported at its key.
func interpolate(n *yaml.Node, t reflect.Type, path, file string, lookup func(string) (string, bool), errs *Errors) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			var ft reflect.Type
			switch {
			case t == nil:
			case t.Kind() == reflect.Struct:
				ft = yamlFields(t)[k]
			case t.Kind() == reflect.Map:
				ft = t.Elem()
			}
			interpolate(n.Content[i+1], ft, join(path, k), file, lookup, errs)
		}
	case yaml.SequenceNode:
		var et reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			et = t.Elem()
		}
		for i, c := range n.Content {
			interpolate(c, et, fmt.Sprintf("%s[%d]", path, i), file, lookup, errs)
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "${") {
			return
		}
		unset := false
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if v, ok := lookup(m[1]); ok && v != "" {
				return v
			}
			if m[2] != "" {
				return m[3]
			}
			unset = true
			*errs = append(*errs, &Problem{file, path, fmt.Sprintf("environment variable %s is not set", m[1])})
			return ""
		})
		// An interpolated value is data, never YAML: it stays one scalar
		// whatever it holds. A quoted or explicitly tagged reference
		// keeps what its author wrote.
		if n.Style != 0 || unset {
			return
		}
		if t == nil || t.Kind() == reflect.String || t.Kind() == reflect.Interface {
			n.Tag = "!!str"
			return
		}
		n.Tag = "" // typed by the decoder from the interpolated text
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			*errs = append(*errs, &Problem{file, path, fmt.Sprintf("%q (interpolated) is not a %s", n.Value, typeWord(t))})
			// Reported here, at its key: the whole-file decode leaves
			// the field zero instead of reporting it again.
			n.Tag, n.Value = "!!null", ""
		}
	}
}

// typeWord names what a scalar field expects, for messages.
func typeWord(t reflect.Type) string {
	if t == reflect.TypeOf(time.Duration(0)) {
		return "duration (e.g. 30s)"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.String()
}

// checkKeys reports every key that names no field, with its full path.
func checkKeys(n *yaml.Node, t reflect.Type, path, file string, errs *Errors) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.MappingNode:
		switch t.Kind() {
		case reflect.Struct:
			fields := yamlFields(t)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				ft, ok := fields[k]
				if !ok {
					reason := fmt.Sprintf("unknown key (line %d)", n.Content[i].Line)
					if near := nearest(k, fields); near != "" {
						reason += fmt.Sprintf("; did you mean %q?", near)
					}
					*errs = append(*errs, &Problem{file, join(path, k), reason})
					continue
				}
				checkKeys(n.Content[i+1], ft, join(path, k), file, errs)
			}
		case reflect.Map:
			for i := 0; i+1 < len(n.Content); i += 2 {
				checkKeys(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), file, errs)
			}
		}
	case yaml.SequenceNode:
		if t.Kind() == reflect.Slice {
			for i, c := range n.Content {
				checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), file, errs)
			}
		}
	}
}

// nearest returns the key of fields closest to k, if it is at most two
// edits away (and fewer than k has letters: "ab" is not a typo of "id");
// on a tie, the alphabetically first.
func nearest(k string, fields map[string]reflect.Type) string {
	best, bestD := "", 3
	for f := range fields {
		d := editDistance(k, f)
		if d < bestD || (d == bestD && f < best) {
			best, bestD = f, d
		}
	}
	if best == "" || bestD >= len(k) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (config keys are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		m[name] = f.Type
	}
	return m
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// explicitZeros refuses a zero written for a limit whose zero would
// otherwise mean its default: the memory bounds, where 0 reads as "no
// memory at all" and silently getting 32 MiB instead would surprise.
func explicitZeros(doc *yaml.Node, c *Config, file string, errs *Errors) {
	limits := mappingValue(doc, "limits")
	if limits == nil {
		return
	}
	for _, l := range []struct {
		key string
		n   int64
	}{
		{"max_response_bytes", c.Limits.MaxResponseBytes},
		{"max_event_bytes", c.Limits.MaxEventBytes},
		{"max_inflight_bytes", c.Limits.MaxInflightBytes},
	} {
		if l.n == 0 && mappingValue(limits, l.key) != nil {
			*errs = append(*errs, &Problem{file, "limits." + l.key, "must be a positive number of bytes (leave it out for the default), got 0"})
		}
	}
}

// mappingValue is the value of key in mapping n, nil if n is no mapping
// or has no such key.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
