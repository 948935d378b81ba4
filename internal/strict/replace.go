package strict

import (
	"bytes"
	"encoding/json"
)

// ReplaceTop returns body with the value of its top-level member name
// replaced by value (JSON), every other byte kept: custody rewrites the
// model it forwards without re-encoding the client's request. body must
// be a valid JSON object that Check accepted (name appears once); if name
// is absent, body is returned unchanged.
func ReplaceTop(body []byte, name string, value []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return body
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return body
		}
		start := d.InputOffset()
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return body
		}
		if tok == name {
			end := d.InputOffset()
			// start is just after the key; the value begins after the
			// colon and any space.
			vs := start + int64(bytes.Index(body[start:end], raw))
			out := make([]byte, 0, len(body)+len(value))
			out = append(out, body[:vs]...)
			out = append(out, value...)
			return append(out, body[vs+int64(len(raw)):]...)
		}
	}
	return body
}
