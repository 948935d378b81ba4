// Package jsonvalid checks that bytes are JSON, as encoding/json.Valid
// does, several times faster: the gateway checks every request and every
// response body before its scanners walk them without checks of their
// own, and encoding/json's byte-at-a-time state machine was the largest
// part of reading a response.
package jsonvalid

// maxDepth is encoding/json's nesting limit: a value nested deeper is not
// valid to it, so not here either.
const maxDepth = 10000

// Valid reports whether b is one JSON value, with optional whitespace
// around it, exactly as encoding/json.Valid does (which, like this, does
// not check that strings are UTF-8).
func Valid(b []byte) bool {
	var objects [maxDepth/64 + 1]uint64 // bit d: the container at depth d is an object
	depth := 0
	i := skipSpace(b, 0)
value:
	for {
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if depth == maxDepth {
				return false
			}
			obj := c == '{'
			if obj {
				objects[depth/64] |= 1 << (depth % 64)
			} else {
				objects[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			i = skipSpace(b, i+1)
			if i < len(b) && (obj && b[i] == '}' || !obj && b[i] == ']') {
				depth--
				i++
				break
			}
			if obj {
				if i = key(b, i); i < 0 {
					return false
				}
			}
			continue value
		case c == '"':
			if i = str(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = number(b, i); i < 0 {
				return false
			}
		default:
			return false
		}
		// After a value: the end of the input at depth 0, else a comma
		// or the end of the enclosing containers.
		for {
			i = skipSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			obj := objects[(depth-1)/64]&(1<<((depth-1)%64)) != 0
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
				if obj {
					if i = key(b, i); i < 0 {
						return false
					}
				}
				continue value
			case '}':
				if !obj {
					return false
				}
			case ']':
				if obj {
					return false
				}
			default:
				return false
			}
			depth--
			i++
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// key checks a member's key and its colon at b[i], returning the index of
// its value (after whitespace), or -1.
func key(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = str(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

var hex = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// str checks the string starting at b[i] == '"', returning the index just
// past it, or -1.
func str(b []byte, i int) int {
	for i++; i < len(b); {
		if plain[b[i]] {
			i++
			continue
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !hex[b[i+2]] || !hex[b[i+3]] || !hex[b[i+4]] || !hex[b[i+5]] {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
	return -1
}

// literal checks that b holds lit at i, returning the index past it, or -1.
func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// number checks the number starting at b[i]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
// returning the index just past it, or -1.
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
