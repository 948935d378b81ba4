package openai

import "github.com/custody-gateway/custody/internal/jsonscan"

// Walks over the members of one object or the elements of one array in
// JSON already known to be valid (json.Valid passed), with jsonscan: no
// decoding, no allocation. It must never be given unchecked bytes.

// eachMember calls fn with each key (raw, as written between its quotes:
// strictObject unescapes it) and the byte range of its value, for the
// object starting at b[i] == '{'.
func eachMember(b []byte, i int, fn func(key []byte, vs, ve int) error) error {
	i = jsonscan.Space(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = jsonscan.String(b, i)
		key := b[ks+1 : i-1]
		i = jsonscan.Space(b, i)
		i = jsonscan.Space(b, i+1) // ':'
		vs := i
		i = jsonscan.Value(b, i)
		if err := fn(key, vs, i); err != nil {
			return err
		}
		i = jsonscan.Space(b, i)
		if i < len(b) && b[i] == ',' {
			i = jsonscan.Space(b, i+1)
		}
	}
	return nil
}

// eachElement calls fn with the index and the start of each element of
// the array starting at b[i] == '['.
func eachElement(b []byte, i int, fn func(k, vs int) error) error {
	i = jsonscan.Space(b, i+1)
	for k := 0; i < len(b) && b[i] != ']'; k++ {
		if err := fn(k, i); err != nil {
			return err
		}
		i = jsonscan.Space(b, jsonscan.Value(b, i))
		if i < len(b) && b[i] == ',' {
			i = jsonscan.Space(b, i+1)
		}
	}
	return nil
}
