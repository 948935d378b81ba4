// Package strict checks that the JSON members custody reads appear once,
// spelled exactly, in a body that the client, the upstream and custody
// all parse: a duplicate member, a case variant ("Model") or an escaped
// spelling ("mod\u0065l") would let two parsers read two different
// requests or answers from one body (see openai/members.go, whose rule
// this is, for the chat dialect's fast scanner).
//
// Members holds the checked names of one object and, for the names whose
// value custody reads inside, the members of that value (an object, or
// each object of an array). Other members are the sender's business and
// are not looked at.
package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Members is the checked members of one JSON object: each name maps to
// the members of its value, or nil for a value not looked into.
type Members map[string]Members

// Error says which member is ambiguous and where (never its value).
type Error struct {
	Path string // e.g. "messages[2].content[0]"; "" at the top level
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Check checks body, which must be valid JSON (json.Valid), against m.
// It returns an *Error for an ambiguous member, nil otherwise.
func Check(body []byte, m Members) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	w := walker{d: d, b: body}
	err := w.value(m, "")
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type walker struct {
	d *json.Decoder
	b []byte
}

// value reads one value; m applies to it when it is an object or an array
// of objects.
func (w *walker) value(m Members, path string) error {
	tok, err := w.d.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return w.object(m, path)
	case json.Delim('['):
		for k := 0; w.d.More(); k++ {
			if err := w.value(m, path+"["+strconv.Itoa(k)+"]"); err != nil {
				return err
			}
		}
		_, err := w.d.Token() // ']'
		return err
	}
	return nil
}

func (w *walker) object(m Members, path string) error {
	var seen map[string]bool
	for w.d.More() {
		before := w.d.InputOffset()
		tok, err := w.d.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		raw := w.b[before:w.d.InputOffset()]
		name, checked := "", false
		for n := range m {
			if strings.EqualFold(key, n) {
				name, checked = n, true
				break
			}
		}
		var inner Members
		if checked {
			switch {
			case key != name:
				return &Error{path, fmt.Sprintf("member %q differs from %q only in case", key, name)}
			case bytes.IndexByte(raw, '\\') >= 0:
				return &Error{path, fmt.Sprintf("member %q is written with escapes", name)}
			case seen[name]:
				return &Error{path, fmt.Sprintf("duplicate member %q", name)}
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[name] = true
			inner = m[name]
		}
		if inner == nil {
			if err := w.skip(); err != nil {
				return err
			}
			continue
		}
		if err := w.value(inner, join(path, name)); err != nil {
			return err
		}
	}
	_, err := w.d.Token() // '}'
	return err
}

// skip reads one value without looking into it.
func (w *walker) skip() error {
	var raw json.RawMessage
	return w.d.Decode(&raw)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
