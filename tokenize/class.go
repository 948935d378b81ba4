package tokenize

import (
	"unicode"
	"unicode/utf8"
)

// class is the set of regex character classes a rune belongs to, as the
// tiktoken patterns use them. \s is Unicode White_Space, which is what
// unicode.IsSpace reports.
type class uint8

const (
	cUpper   class = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] in o200k
	cLower                     // [\p{Ll}\p{Lm}\p{Lo}\p{M}] in o200k
	cLetter                    // \p{L}
	cNumber                    // \p{N}
	cSpace                     // \s
	cNewline                   // [\r\n]
)

// asciiClass holds the class of every ASCII byte; it is a constant table.
var asciiClass = func() (t [128]class) {
	for b := 0; b < 128; b++ {
		t[b] = runeClass(rune(b))
	}
	return t
}()

// runeClass classifies r from the unicode tables. An invalid byte decodes
// as utf8.RuneError (U+FFFD, a symbol), which is in none of the classes.
func runeClass(r rune) class {
	switch {
	case r == '\r' || r == '\n':
		return cSpace | cNewline
	case unicode.IsSpace(r):
		return cSpace
	case unicode.IsLetter(r):
		switch {
		case unicode.IsLower(r):
			return cLetter | cLower
		case unicode.IsUpper(r) || unicode.IsTitle(r):
			return cLetter | cUpper
		}
		return cLetter | cUpper | cLower // Lm, Lo
	case unicode.IsMark(r):
		return cUpper | cLower
	case unicode.IsNumber(r):
		return cNumber
	}
	return 0
}

// classAt returns the class and the UTF-8 width of the rune at s[i].
func classAt(s string, i int) (class, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return runeClass(r), n
}

// runOf returns the end of the run of runes from i that have any class bit
// of want.
func runOf(s string, i int, want class) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += n
	}
	return i
}
