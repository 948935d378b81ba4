// Package jsonscan moves through JSON that is already known to be valid
// (json.Valid, or jsonvalid.Valid, passed): it finds where whitespace, a
// string, a member's key or a whole value ends, without decoding or
// allocating. It must never be given unchecked bytes: it does not detect
// errors, it only stops at the end of the input.
//
// The chat dialect's request scanner (openai), the strict member check
// (internal/strict) and the gateway's Messages and Responses text walker
// move through bodies with it.
package jsonscan

import "bytes"

// Space returns the index of the first byte at or after i that is not
// JSON whitespace (len(b) if there is none).
func Space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// String returns the index just past the string whose opening quote is
// b[i]. It jumps from quote to quote (bytes.IndexByte) rather than byte
// by byte: most of a body's bytes are inside strings. A quote ends the
// string unless an odd run of backslashes precedes it.
func String(b []byte, i int) int {
	start := i + 1
	for i = start; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		n := 0
		for k := q - 1; k >= start && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// Value returns the index just past the value starting at b[i].
func Value(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = String(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// Key reads the member whose key's opening quote is b[i]: it returns the
// key as written, quotes included (escapes are the caller's to decode),
// and the index where the member's value starts, past the colon and the
// whitespace around it.
func Key(b []byte, i int) (raw []byte, value int) {
	end := String(b, i)
	raw = b[i:end]
	j := Space(b, end) + 1 // ':'
	return raw, Space(b, j)
}
