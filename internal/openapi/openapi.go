// Package openapi checks JSON documents against the schemas of an OpenAPI
// 3.1 document: it finds the schema of an operation's response, and
// internal/jsonschema checks against it (its subset of JSON Schema, with
// local $ref, format date-time and OpenAPI's annotations). A keyword
// outside that subset is an error, not ignored, so the document cannot
// promise what no test checks.
package openapi

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/custody-gateway/custody/internal/jsonschema"
)

// Doc is a parsed OpenAPI document.
type Doc struct {
	root map[string]any
}

// Parse reads an OpenAPI 3.1 document.
func Parse(b []byte) (*Doc, error) {
	v, err := jsonschema.Decode(b, true)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	root, _ := v.(map[string]any)
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		return nil, fmt.Errorf("openapi: version %q, want 3.1", v)
	}
	if _, ok := root["paths"].(map[string]any); !ok {
		return nil, errors.New("openapi: no paths")
	}
	return &Doc{root: root}, nil
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
	v, err := jsonschema.Decode(b, true)
	if err != nil {
		return err
	}
	return d.Validate(schema, v)
}

// Validate checks v (as decoded with json.Decoder.UseNumber) against
// schema; the error names the first offending place, e.g. $.data[0].shard.
// An error of the document itself (a keyword outside the subset, a $ref
// to nothing) starts with "openapi: ".
func (d *Doc) Validate(schema, v any) error {
	s, err := jsonschema.Compile(schema, jsonschema.Options{Root: d.root, OpenAPI: true, Quote: true})
	if err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	return s.Validate(v)
}
