package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Decode decodes one JSON value, numbers as json.Number, refusing
// trailing data and duplicate members (named when quote is set).
func Decode(raw []byte, quote bool) (any, error) {
	if err := NoDuplicates(raw, quote); err != nil {
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

// NoDuplicates refuses JSON in which an object holds the same member
// twice, exactly or in another case (encoding/json would keep the last,
// or match a field case-insensitively): a suite means one thing.
// Names are quoted when quote is set (a suite's own members), never for
// an answer.
func NoDuplicates(raw []byte, quote bool) error {
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
					return fmt.Errorf("member %q appears twice (or in another case)", Truncate(k, 40))
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

// Truncate is s cut to at most n bytes on a character boundary, the cut
// marked with …: a name quoted in an error stays short.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
