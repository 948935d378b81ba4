package strict

// ReplaceTop returns body with the value of its top-level member name
// replaced by value (JSON), every other byte kept: custody rewrites the
// model it forwards without re-encoding the client's request. body must
// be a valid JSON object that Check accepted (name appears once); if name
// is absent, body is returned unchanged. It reads the members' bytes as
// Check does (a key decoded only when it has an escape or a byte past
// ASCII).
func ReplaceTop(body []byte, name string, value []byte) []byte {
	w := walker{b: body}
	w.space()
	if w.i >= len(w.b) || w.b[w.i] != '{' {
		return body
	}
	w.i++
	for !w.next('}') {
		raw := w.key()
		vs := w.i
		w.skip()
		if k := raw[1 : len(raw)-1]; plain(k) && string(k) != name || !plain(k) && keyOf(raw) != name {
			continue
		}
		out := make([]byte, 0, len(body)-(w.i-vs)+len(value))
		out = append(out, body[:vs]...)
		out = append(out, value...)
		return append(out, body[w.i:]...)
	}
	return body
}
