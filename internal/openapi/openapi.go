// Package openapi checks JSON documents against the schemas of an OpenAPI
// 3.1 document: the subset of JSON Schema that custody's admin API
// document uses (type, properties, required, additionalProperties, items,
// enum, const, format date-time and local $ref). A keyword outside that
// subset is an error, not ignored, so the document cannot promise what
// no test checks.
package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Doc is a parsed OpenAPI document.
type Doc struct {
	root map[string]any
}

// Parse reads an OpenAPI 3.1 document.
func Parse(b []byte) (*Doc, error) {
	var root map[string]any
	if err := decode(b, &root); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		return nil, fmt.Errorf("openapi: version %q, want 3.1", v)
	}
	if _, ok := root["paths"].(map[string]any); !ok {
		return nil, errors.New("openapi: no paths")
	}
	return &Doc{root: root}, nil
}

func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Paths lists the path templates of the document.
func (d *Doc) Paths() []string {
	var out []string
	for p := range d.root["paths"].(map[string]any) {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Response is the schema of the answer to method on path (a concrete path:
// a template segment {x} matches any one segment) with status, or
// "default" when the status is not listed.
func (d *Doc) Response(method, path string, status int) (any, error) {
	op, err := d.operation(method, path)
	if err != nil {
		return nil, err
	}
	resps, _ := op["responses"].(map[string]any)
	r, ok := resps[strconv.Itoa(status)]
	if !ok {
		if r, ok = resps["default"]; !ok {
			return nil, fmt.Errorf("openapi: %s %s documents no response %d", method, path, status)
		}
	}
	resp, err := d.deref(r)
	if err != nil {
		return nil, err
	}
	m, _ := resp.(map[string]any)
	content, _ := m["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	schema, ok := media["schema"]
	if !ok {
		return nil, fmt.Errorf("openapi: %s %s %d has no application/json schema", method, path, status)
	}
	return schema, nil
}

func (d *Doc) operation(method, path string) (map[string]any, error) {
	for tmpl, item := range d.root["paths"].(map[string]any) {
		if !matches(tmpl, path) {
			continue
		}
		ops, _ := item.(map[string]any)
		if op, ok := ops[strings.ToLower(method)].(map[string]any); ok {
			return op, nil
		}
	}
	return nil, fmt.Errorf("openapi: %s %s is not documented", method, path)
}

func matches(tmpl, path string) bool {
	t, p := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(t) != len(p) {
		return false
	}
	for i := range t {
		if t[i] != p[i] && !(strings.HasPrefix(t[i], "{") && strings.HasSuffix(t[i], "}") && p[i] != "") {
			return false
		}
	}
	return true
}

// deref follows a local $ref ("#/components/...").
func (d *Doc) deref(v any) (any, error) {
	for range 32 {
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return v, nil
		}
		p, ok := strings.CutPrefix(ref, "#/")
		if !ok {
			return nil, fmt.Errorf("openapi: $ref %q is not local", ref)
		}
		var cur any = d.root
		for _, seg := range strings.Split(p, "/") {
			cm, _ := cur.(map[string]any)
			if cur, ok = cm[seg]; !ok {
				return nil, fmt.Errorf("openapi: $ref %q resolves to nothing", ref)
			}
		}
		v = cur
	}
	return nil, errors.New("openapi: $ref chain too long")
}

// ValidateJSON checks the JSON bytes b against schema.
func (d *Doc) ValidateJSON(schema any, b []byte) error {
	var v any
	if err := decode(b, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return d.Validate(schema, v)
}

// Validate checks v (as decoded with json.Decoder.UseNumber) against
// schema; the error names the first offending place, e.g. $.data[0].shard.
func (d *Doc) Validate(schema, v any) error {
	return d.validate(schema, v, "$")
}

// annotations are keywords that say nothing to validate.
var annotations = []string{"description", "summary", "title", "example", "examples", "deprecated"}

func (d *Doc) validate(schema, v any, at string) error {
	s, err := d.deref(schema)
	if err != nil {
		return err
	}
	m, ok := s.(map[string]any)
	if !ok {
		return fmt.Errorf("openapi: schema at %s is not an object", at)
	}
	for k := range m {
		switch k {
		case "type", "properties", "required", "additionalProperties", "items", "enum", "const", "format":
		default:
			if !slices.Contains(annotations, k) {
				return fmt.Errorf("openapi: schema keyword %q (at %s) is not supported by this validator", k, at)
			}
		}
	}
	if t, ok := m["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				s, _ := x.(string)
				types = append(types, s)
			}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return isType(t, v) }) {
			return fmt.Errorf("%s: %s is not of type %s", at, kind(v), strings.Join(types, " or "))
		}
	}
	if c, ok := m["const"]; ok && !equal(c, v) {
		return fmt.Errorf("%s: %s is not %v", at, show(v), c)
	}
	if e, ok := m["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return equal(x, v) }) {
		return fmt.Errorf("%s: %s is not one of %v", at, show(v), e)
	}
	if f, _ := m["format"].(string); f == "date-time" {
		if s, ok := v.(string); ok {
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				return fmt.Errorf("%s: %q is not an RFC 3339 time", at, s)
			}
		}
	} else if f != "" {
		return fmt.Errorf("openapi: format %q (at %s) is not supported by this validator", f, at)
	}
	switch v := v.(type) {
	case map[string]any:
		return d.object(m, v, at)
	case []any:
		if items, ok := m["items"]; ok {
			for i, x := range v {
				if err := d.validate(items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (d *Doc) object(m map[string]any, v map[string]any, at string) error {
	props, _ := m["properties"].(map[string]any)
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := v[name]; !ok {
				return fmt.Errorf("%s: required member %q is missing", at, name)
			}
		}
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if ps, ok := props[k]; ok {
			if err := d.validate(ps, v[k], at+"."+k); err != nil {
				return err
			}
			continue
		}
		switch ap := m["additionalProperties"].(type) {
		case bool:
			if !ap {
				return fmt.Errorf("%s: member %q is not in the document (add it to the schema, or drop it)", at, k)
			}
		case map[string]any:
			if err := d.validate(ap, v[k], at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

func isType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			_, err = strconv.ParseUint(n.String(), 10, 64)
		}
		return err == nil
	}
	return false
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		b = append(b[:77], "..."...)
	}
	return string(b)
}

// equal compares decoded JSON values; numbers by their text.
func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
