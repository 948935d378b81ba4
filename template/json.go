package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ardanlabs/jinja"
)

// maxDepth bounds the nesting of a decoded request: deeper JSON is
// refused rather than recursed into.
const maxDepth = 128

// decode parses JSON into jinja values, keeping object keys in their
// order (a Python dict does, and tojson prints them so) and numbers as
// ints when written without a fraction or exponent.
func decode(data []byte) (jinja.Value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := d.Token(); err != io.EOF {
		return jinja.Undefined(), errors.New("trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (jinja.Value, error) {
	if depth > maxDepth {
		return jinja.Undefined(), fmt.Errorf("JSON nested deeper than %d", maxDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return jinja.Undefined(), err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := jinja.NewDict()
			dict := obj.AsDict()
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return jinja.Undefined(), err
				}
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				dict.Set(kt.(string), v)
			}
			if _, err := d.Token(); err != nil {
				return jinja.Undefined(), err
			}
			return obj, nil
		case '[':
			var items []jinja.Value
			for d.More() {
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, v)
			}
			if _, err := d.Token(); err != nil {
				return jinja.Undefined(), err
			}
			return jinja.NewList(items), nil
		}
	case string:
		return jinja.NewString(t), nil
	case bool:
		return jinja.NewBool(t), nil
	case nil:
		return jinja.None(), nil
	case json.Number:
		return number(t), nil
	}
	return jinja.Undefined(), fmt.Errorf("unexpected JSON token %v", tok)
}

// number keeps an integer an int (Python's json.loads does) and anything
// with a fraction or exponent a float.
func number(n json.Number) jinja.Value {
	if !strings.ContainsAny(string(n), ".eE") {
		if i, err := n.Int64(); err == nil {
			return jinja.NewInt(i)
		}
	}
	f, err := n.Float64()
	if err != nil {
		return jinja.NewString(string(n))
	}
	return jinja.NewFloat(f)
}

// get returns obj[key], or Undefined when obj is not a dict or lacks it.
func get(obj jinja.Value, key string) jinja.Value {
	if !obj.IsDict() {
		return jinja.Undefined()
	}
	v, ok := obj.AsDict().Get(key)
	if !ok {
		return jinja.Undefined()
	}
	return v
}

// str returns v as a string, or "" when it is not one.
func str(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return ""
}

// items returns v's items, or nil when it is not a list.
func items(v jinja.Value) []jinja.Value {
	if v.IsList() {
		return v.AsList().Items
	}
	return nil
}

// clone copies a dict one level deep, so a preprocessing step can change
// a message without changing the client's.
func clone(obj jinja.Value) jinja.Value {
	out := jinja.NewDict()
	if obj.IsDict() {
		src := obj.AsDict()
		for _, k := range src.Keys {
			out.AsDict().Set(k, src.Data[k])
		}
	}
	return out
}

// dict builds an ordered dict from key, value pairs.
func dict(kv ...any) jinja.Value {
	out := jinja.NewDict()
	for i := 0; i+1 < len(kv); i += 2 {
		v, ok := kv[i+1].(jinja.Value)
		if !ok {
			v = jinja.FromGoValue(kv[i+1])
		}
		out.AsDict().Set(kv[i].(string), v)
	}
	return out
}

// without returns a copy of obj without key (a dict keeps its order).
func without(obj jinja.Value, key string) jinja.Value {
	out := jinja.NewDict()
	src := obj.AsDict()
	for _, k := range src.Keys {
		if k != key {
			out.AsDict().Set(k, src.Data[k])
		}
	}
	return out
}
