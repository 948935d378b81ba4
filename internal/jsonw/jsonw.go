// Package jsonw appends JSON values to byte slices exactly as
// encoding/json writes them, for the encoders on every request's path
// (the leaf, the index row) that are written out by hand to avoid
// reflection.
package jsonw

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendString appends s quoted as encoding/json quotes it. The strings
// custody writes are mostly identifiers and model names: printable ASCII
// that needs no escape is copied; anything else (control bytes, quotes,
// the HTML-sensitive <, > and &, which encoding/json escapes, non-ASCII,
// invalid UTF-8) goes through json.Marshal itself, so the two cannot
// disagree.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// StringField appends name (the comma, key and colon, as written) and s.
func StringField(dst []byte, name, s string) []byte {
	return AppendString(append(dst, name...), s)
}

// IntField appends name and n.
func IntField(dst []byte, name string, n int64) []byte {
	return strconv.AppendInt(append(dst, name...), n, 10)
}

// BoolField appends name and b.
func BoolField(dst []byte, name string, b bool) []byte {
	return strconv.AppendBool(append(dst, name...), b)
}

// AppendStrings appends ss as a JSON array of strings ([] for none).
func AppendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}
