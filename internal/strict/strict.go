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
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/custody-gateway/custody/internal/jsonscan"
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
//
// It walks the bytes once, without a decoder: a json.Decoder's tokens
// cost an error value built and dropped at the end of every value, and
// this runs on every answer and stream event of the Messages and
// Responses wires. A key is decoded (encoding/json's way) only when it
// has an escape or a byte past ASCII; a path is spelled only for an
// error.
func Check(body []byte, m Members) error {
	w := walker{b: body}
	w.space()
	if w.i >= len(w.b) {
		return nil
	}
	err := w.value(m)
	if err != nil {
		// Where: found again, the path spelled on the way, only now.
		f := walker{b: body}
		f.space()
		err.Path, _ = f.find(m, "", w.at)
		return err
	}
	return nil
}

// walker walks valid JSON: i is the next byte to read. at is where the
// object of an ambiguous member begins.
type walker struct {
	b  []byte
	i  int
	at int
}

// value walks one value at w.i; m applies to it when it is an object or
// an array of objects (of arrays of objects...).
func (w *walker) value(m Members) *Error {
	switch w.b[w.i] {
	case '{':
		return w.object(m)
	case '[':
		w.i++
		for {
			if w.next(']') {
				return nil
			}
			if err := w.value(m); err != nil {
				return err
			}
		}
	}
	w.skip()
	return nil
}

// next moves past the space and the comma before an element or a
// member, and reports whether end (the object's or array's) is there
// instead, moving past it.
func (w *walker) next(end byte) bool {
	w.space()
	switch w.b[w.i] {
	case end:
		w.i++
		return true
	case ',':
		w.i++
		w.space()
	}
	return false
}

// key reads a member's key and the colon after it, and returns the key
// as it is written (quoted).
func (w *walker) key() []byte {
	raw, value := jsonscan.Key(w.b, w.i)
	w.i = value
	return raw
}

func (w *walker) object(m Members) *Error {
	// The checked members seen, as written: each is spelled exactly (a
	// variant is refused first), so the bytes are the name.
	var small [8][]byte
	seen := small[:0]
	at := w.i
	w.i++ // '{'
	for !w.next('}') {
		raw := w.key()
		k := raw[1 : len(raw)-1]
		inner, exact := m[string(k)] // found without a copy
		exact = exact && plain(k)
		name, checked := "", exact
		if !exact {
			name, checked = match(raw, m)
		}
		if checked {
			var msg string
			switch {
			case exact:
			case !spelled(raw, name):
				msg = fmt.Sprintf("member %q differs from %q only in case", keyOf(raw), name)
			case bytes.IndexByte(raw, '\\') >= 0:
				msg = fmt.Sprintf("member %q is written with escapes", name)
			}
			spelt := k // the name, as written
			if !exact {
				spelt, inner = []byte(name), m[name]
			}
			if msg == "" && slices.ContainsFunc(seen, func(s []byte) bool { return bytes.Equal(s, spelt) }) {
				msg = fmt.Sprintf("duplicate member %q", string(spelt))
			}
			if msg != "" {
				w.at = at
				return &Error{Msg: msg}
			}
			seen = append(seen, spelt)
		}
		if !checked || inner == nil {
			w.skip()
			continue
		}
		if err := w.value(inner); err != nil {
			return err
		}
	}
	return nil
}

// find walks as value does, spelling the path as it goes, to the object
// that begins at target, and returns that object's path. It walks only a
// body that value found ambiguous at target: every object before it
// passed.
func (w *walker) find(m Members, path string, target int) (string, bool) {
	switch w.b[w.i] {
	case '{':
		if w.i == target {
			return path, true
		}
		w.i++
		for !w.next('}') {
			name, checked := match(w.key(), m)
			if inner := m[name]; checked && inner != nil {
				if p, ok := w.find(inner, join(path, name), target); ok {
					return p, true
				}
				continue
			}
			w.skip()
		}
		return "", false
	case '[':
		w.i++
		for k := 0; !w.next(']'); k++ {
			if p, ok := w.find(m, path+"["+strconv.Itoa(k)+"]", target); ok {
				return p, true
			}
		}
		return "", false
	}
	w.skip()
	return "", false
}

// match finds the name of m that the key raw (quoted) equals under
// strings.EqualFold, as the decoded key.
func match(raw []byte, m Members) (string, bool) {
	if k := raw[1 : len(raw)-1]; plain(k) {
		for n := range m {
			if EqualFoldASCII(k, n) {
				return n, true
			}
		}
		return "", false
	}
	key := keyOf(raw)
	for n := range m {
		if strings.EqualFold(key, n) {
			return n, true
		}
	}
	return "", false
}

// spelled reports whether the key raw (quoted), decoded, is name.
func spelled(raw []byte, name string) bool {
	k := raw[1 : len(raw)-1]
	if plain(k) {
		return string(k) == name
	}
	return keyOf(raw) == name
}

// keyOf is the key raw (quoted) decoded as encoding/json decodes it.
func keyOf(raw []byte) string {
	if k := raw[1 : len(raw)-1]; plain(k) {
		return string(k)
	}
	var s string
	json.Unmarshal(bytes.Clone(raw), &s) // a copy: raw, and the walker's body, stay off the heap's books
	return s
}

// plain reports whether a string's contents are printable ASCII without
// an escape: their own decoding.
func plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// EqualFoldASCII is strings.EqualFold(string(k), n) for an ASCII k,
// without the copy where n is ASCII too.
func EqualFoldASCII(k []byte, n string) bool {
	for i := 0; i < len(n); i++ {
		if n[i] >= 0x80 {
			return strings.EqualFold(string(k), n) // the Kelvin sign folds to k
		}
	}
	if len(k) != len(n) {
		return false
	}
	for i := range k {
		a, b := k[i], n[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

func (w *walker) space() { w.i = jsonscan.Space(w.b, w.i) }

// skip moves past the value at w.i without looking into it.
func (w *walker) skip() { w.i = jsonscan.Value(w.b, w.i) }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
