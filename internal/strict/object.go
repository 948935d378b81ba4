package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/custody-gateway/custody/internal/jsonvalid"
)

// Object is a dialect's request body as custody reads it: its top-level
// members by name, and the names the dialect does not know (sorted), which
// it may refuse or pass on.
type Object struct {
	Members map[string]json.RawMessage
	Extra   []string
}

// DecodeObject checks that body is valid UTF-8 JSON holding one object
// whose members m names appear once, exactly spelled (Check), and decodes
// its top level. known lists the members the dialect reads; the others
// are Extra. The error says what is wrong, never quoting a value.
func DecodeObject(body []byte, m Members, known map[string]bool) (Object, error) {
	if !utf8.Valid(body) {
		return Object{}, errors.New("the body is not valid UTF-8")
	}
	if !jsonvalid.Valid(body) {
		return Object{}, errors.New("the body is not valid JSON")
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Object{}, errNotObject
	}
	if err := Check(body, m); err != nil {
		return Object{}, err
	}
	var o Object
	if err := json.Unmarshal(body, &o.Members); err != nil {
		return Object{}, errNotObject
	}
	o.Extra = Unknown(o.Members, known)
	return o, nil
}

// Unknown is the names of the members not in known, sorted: what a
// dialect passes on or refuses by name.
func Unknown(members map[string]json.RawMessage, known map[string]bool) []string {
	var out []string
	for k := range members {
		if !known[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

var errNotObject = errors.New("the body must be a JSON object")

// Present is the value of member name, unless it is absent or null.
func (o Object) Present(name string) (json.RawMessage, bool) {
	raw, ok := o.Members[name]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}
