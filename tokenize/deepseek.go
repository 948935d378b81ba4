package tokenize

import "unicode/utf8"

// DeepSeek-V3's pre-tokenizer is three Split regexes, each Isolated:
//
//	\p{N}{1,3}
//	[\x{4e00}-\x{9fa5}\x{3040}-\x{309f}\x{30a0}-\x{30ff}]+
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//	 ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// On regexp2 they run at about 2 MB/s; this file implements them by hand,
// with the Unicode 16.0 classes of class_table.go. Unlike the tiktoken
// patterns they do not tile the text: where no alternative matches, the
// text up to the next match is a piece of its own (Isolated keeps both).

// gapPattern names a Split regex implemented natively whose matches leave
// gaps.
type gapPattern uint8

const (
	gapDigits3  gapPattern = iota // \p{N}{1,3}
	gapKanaHan                    // DeepSeek's run of CJK ideographs and kana
	gapDeepSeek                   // DeepSeek-V3's word pattern
)

// deepSeekPatterns are DeepSeek-V3's Split regexes as its tokenizer.json
// spells them.
var deepSeekPatterns = map[string]gapPattern{
	`\p{N}{1,3}`: gapDigits3,
	"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+": gapKanaHan,
	"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+": gapDeepSeek,
}

func (p gapPattern) split(s string, emit func(string)) {
	c := cutter{s: s, b: isolated, emit: emit}
	for i := 0; i < len(s); {
		if e := p.matchAt(s, i); e > i {
			c.match(i, e)
			i = e
			continue
		}
		_, n := classAt(s, i)
		i += n
	}
	c.done()
}

// matchAt returns the end of the match that starts at s[i], or -1.
func (p gapPattern) matchAt(s string, i int) int {
	switch p {
	case gapDigits3:
		if c, _ := classAt(s, i); c&cNumber != 0 {
			return numberRun(s, i, 3)
		}
		return -1
	case gapKanaHan:
		e := i
		for e < len(s) {
			r, n := utf8.DecodeRuneInString(s[e:])
			if !(0x4e00 <= r && r <= 0x9fa5 || 0x3040 <= r && r <= 0x309f || 0x30a0 <= r && r <= 0x30ff) {
				break
			}
			e += n
		}
		if e == i {
			return -1
		}
		return e
	}
	return deepSeekWordAt(s, i)
}

// letterOrMark is [\p{L}\p{M}]: in class_table.go, a letter, or any rune
// in o200k's upper or lower sets (which are letters and marks).
const letterOrMark = cLetter | cUpper | cLower

func isASCIIPunct(b byte) bool {
	return '!' <= b && b <= '/' || ':' <= b && b <= '@' || '[' <= b && b <= '`' || '{' <= b && b <= '~'
}

func isASCIILetter(b byte) bool { return 'a' <= b|0x20 && b|0x20 <= 'z' }

// deepSeekWordAt tries the alternatives of DeepSeek-V3's word pattern at
// s[i] in order, as a backtracking engine does.
func deepSeekWordAt(s string, i int) int {
	c0, n0 := classAt(s, i)
	// [!"#...~][A-Za-z]+
	if isASCIIPunct(s[i]) && i+1 < len(s) && isASCIILetter(s[i+1]) {
		e := i + 2
		for e < len(s) && isASCIILetter(s[e]) {
			e++
		}
		return e
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+, with the prefix, then without.
	if c0&(cNewline|cLetter|cPunctSym) == 0 {
		if e := runOf(s, i+n0, letterOrMark); e > i+n0 {
			return e
		}
	}
	if c0&letterOrMark != 0 {
		return runOf(s, i, letterOrMark)
	}
	// ?[\p{P}\p{S}]+[\r\n]*
	start := -1
	switch {
	case c0&cPunctSym != 0:
		start = i
	case s[i] == ' ' && i+1 < len(s):
		if c1, _ := classAt(s, i+1); c1&cPunctSym != 0 {
			start = i + 1
		}
	}
	if start >= 0 {
		e := runOf(s, start, cPunctSym)
		for e < len(s) && (s[e] == '\r' || s[e] == '\n') {
			e++
		}
		return e
	}
	// \s*[\r\n]+|\s+(?!\S)|\s+
	if c0&cSpace != 0 {
		return spaceRun(s, i, c0, n0)
	}
	return -1
}
