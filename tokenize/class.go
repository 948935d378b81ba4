package tokenize

//go:generate go run gen_tables.go

import "unicode/utf8"

// class is the set of regex character classes a rune belongs to, as the
// tiktoken patterns use them. \s is Unicode White_Space. The bit values
// are also those of internal/ucdgen, which writes class_table.go.
type class uint8

const (
	cUpper    class = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] in o200k
	cLower                      // [\p{Ll}\p{Lm}\p{Lo}\p{M}] in o200k
	cLetter                     // \p{L}
	cNumber                     // \p{N}
	cSpace                      // \s
	cNewline                    // [\r\n]
	cPunctSym                   // [\p{P}\p{S}], in DeepSeek-V3's pattern
)

// classRange is a run of code points [lo, hi] of one class.
type classRange struct {
	lo, hi rune
	c      class
}

// runeClass classifies r by Unicode 16.0 (class_table.go), the version of
// the reference tiktoken, not by Go's unicode package, which is 15.0 and
// would split words in the scripts added since. An invalid byte decodes
// as utf8.RuneError (U+FFFD, a symbol), which is in none of the classes.
func runeClass(r rune) class {
	if r < utf8.RuneSelf {
		return asciiClasses[r]
	}
	lo, hi := 0, len(classRanges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch cr := &classRanges[m]; {
		case r < cr.lo:
			hi = m
		case r > cr.hi:
			lo = m + 1
		default:
			return cr.c
		}
	}
	return 0
}

// classAt returns the class and the UTF-8 width of the rune at s[i].
func classAt(s string, i int) (class, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClasses[b], 1
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
