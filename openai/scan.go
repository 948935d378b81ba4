package openai

import "bytes"

// A minimal scanner over JSON that is already known to be valid
// (json.Valid passed): it walks the members of one object and skips
// values without decoding or allocating. It must never be given unchecked
// bytes; it does not detect errors, only stops at the end of input.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the value starting at i.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
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

// skipString returns the index just past the string starting at b[i]. It
// jumps from quote to quote (bytes.IndexByte) rather than byte by byte:
// most of a request's bytes are inside strings. A quote ends the string
// unless an odd run of backslashes precedes it.
func skipString(b []byte, i int) int {
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

// eachMember calls fn with each key (raw, as written between its quotes:
// strictObject unescapes it) and the byte range of its value, for the
// object starting at b[i] == '{'.
func eachMember(b []byte, i int, fn func(key []byte, vs, ve int) error) error {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = skipString(b, i)
		key := b[ks+1 : i-1]
		i = skipSpace(b, i)
		i = skipSpace(b, i+1) // ':'
		vs := i
		i = skipValue(b, i)
		if err := fn(key, vs, i); err != nil {
			return err
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return nil
}

// eachElement calls fn with the index and the start of each element of
// the array starting at b[i] == '['.
func eachElement(b []byte, i int, fn func(k, vs int) error) error {
	i = skipSpace(b, i+1)
	for k := 0; i < len(b) && b[i] != ']'; k++ {
		if err := fn(k, i); err != nil {
			return err
		}
		i = skipSpace(b, skipValue(b, i))
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return nil
}
