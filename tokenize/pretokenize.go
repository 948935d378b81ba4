package tokenize

// This file splits text into pieces exactly as tiktoken's regexes do, by
// hand, because a backtracking regex engine is most of the cost of
// counting. Each function reproduces the leftmost-first, backtracking
// semantics of one pattern: at position i it tries the alternatives in
// order and returns where the first one that matches ends. Every rune
// belongs to some alternative, so the pieces tile the text.

// pattern names a pre-tokenizer regex implemented natively.
type pattern uint8

const (
	// patCL100k is cl100k_base's (and Llama-3's) pattern, with \p{N}{1,3}:
	//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
	//   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	patCL100k pattern = iota
	// patCL100kDigit is the same with \p{N} (one digit a piece), as in Qwen2.
	patCL100kDigit
	// patO200k is o200k_base's pattern:
	//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
	//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
	//   \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
	patO200k
)

// next returns the end of the piece that starts at s[i], i < len(s).
func (p pattern) next(s string, i int) int {
	if p == patO200k {
		return nextO200k(s, i)
	}
	digits := 3
	if p == patCL100kDigit {
		digits = 1
	}
	return nextCL100k(s, i, digits)
}

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i],
// or 0. Case folding is ASCII only, as in tiktoken-go's regexp2. Rust's
// regex would also fold the long s (U+017F) into s, but no count differs
// (testdata has such texts): "'" and "ſ" never merge into one token.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// notPrefix is the complement of [^\r\n\p{L}\p{N}].
const notPrefix = cNewline | cLetter | cNumber

// symbolic is the complement of [^\s\p{L}\p{N}].
const symbolic = cSpace | cLetter | cNumber

func nextCL100k(s string, i, digits int) int {
	c0, n0 := classAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if n := contraction(s, i); n > 0 {
		return i + n
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c0&notPrefix == 0 {
		if e := runOf(s, i+n0, cLetter); e > i+n0 {
			return e
		}
	}
	if c0&cLetter != 0 {
		return runOf(s, i, cLetter)
	}
	// \p{N}{1,digits}
	if c0&cNumber != 0 {
		return numberRun(s, i, digits)
	}
	// ?[^\s\p{L}\p{N}]+[\r\n]*
	if e := symbolRun(s, i, c0, n0); e > 0 {
		for e < len(s) && (s[e] == '\r' || s[e] == '\n') {
			e++
		}
		return e
	}
	return spaceRun(s, i, c0, n0)
}

func nextO200k(s string, i int) int {
	c0, n0 := classAt(s, i)
	prefix := c0&notPrefix == 0
	// First alternative, with the optional prefix taken, then not taken.
	if prefix {
		if e := o200kLowerWord(s, i+n0); e > 0 {
			return e
		}
	}
	if e := o200kLowerWord(s, i); e > 0 {
		return e
	}
	// Second alternative.
	if prefix {
		if e := o200kUpperWord(s, i+n0); e > 0 {
			return e
		}
	}
	if e := o200kUpperWord(s, i); e > 0 {
		return e
	}
	if c0&cNumber != 0 {
		return numberRun(s, i, 3)
	}
	// ?[^\s\p{L}\p{N}]+[\r\n/]*
	if e := symbolRun(s, i, c0, n0); e > 0 {
		for e < len(s) && (s[e] == '\r' || s[e] == '\n' || s[e] == '/') {
			e++
		}
		return e
	}
	return spaceRun(s, i, c0, n0)
}

// o200kLowerWord matches [U]*[L]+(?i:contraction)? at p, where U is cUpper
// and L is cLower, and returns its end or -1. U* is greedy: when the rune
// after the U run is not in L, backtracking gives back U runes until one
// that is also in L can start L+.
func o200kLowerWord(s string, p int) int {
	e, lastBoth := p, -1
	for e < len(s) {
		c, n := classAt(s, e)
		if c&cUpper == 0 {
			break
		}
		if c&cLower != 0 {
			lastBoth = e
		}
		e += n
	}
	k := -1
	if e < len(s) {
		if c, _ := classAt(s, e); c&cLower != 0 {
			k = e
		}
	}
	if k < 0 {
		if lastBoth < 0 {
			return -1
		}
		k = lastBoth
	}
	f := runOf(s, k, cLower)
	return f + contraction(s, f)
}

// o200kUpperWord matches [U]+[L]*(?i:contraction)? at p, or returns -1.
func o200kUpperWord(s string, p int) int {
	if p >= len(s) {
		return -1
	}
	e := runOf(s, p, cUpper)
	if e == p {
		return -1
	}
	f := runOf(s, e, cLower)
	return f + contraction(s, f)
}

// numberRun matches \p{N}{1,max} at i, where s[i] is a number.
func numberRun(s string, i, max int) int {
	for k := 0; k < max && i < len(s); k++ {
		c, n := classAt(s, i)
		if c&cNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// symbolRun matches " ?[^\s\p{L}\p{N}]+" at i and returns its end, or -1.
func symbolRun(s string, i int, c0 class, n0 int) int {
	if s[i] == ' ' {
		if i+1 < len(s) {
			if c, _ := classAt(s, i+1); c&symbolic == 0 {
				return runNotOf(s, i+1, symbolic)
			}
		}
		return -1
	}
	if c0&symbolic == 0 {
		return runNotOf(s, i+n0, symbolic)
	}
	return -1
}

// runNotOf returns the end of the run of runes from i in none of avoid.
func runNotOf(s string, i int, avoid class) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&avoid != 0 {
			break
		}
		i += n
	}
	return i
}

// spaceRun matches \s*[\r\n]+|\s+(?!\S)|\s+ at i.
func spaceRun(s string, i int, c0 class, n0 int) int {
	if c0&cSpace == 0 {
		return i + n0 // unreachable: every rune is in some alternative
	}
	e, lastNL, last := i, -1, i
	for e < len(s) {
		c, n := classAt(s, e)
		if c&cSpace == 0 {
			break
		}
		if c&cNewline != 0 {
			lastNL = e
		}
		last = e
		e += n
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+ backtracks to the last newline
		return lastNL + 1
	case e == len(s): // \s+(?!\S) at the end of the text
		return e
	case last > i: // \s+(?!\S) gives back the last space
		return last
	}
	return e // \s+
}
