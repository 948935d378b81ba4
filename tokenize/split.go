package tokenize

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// splitter cuts a text into pieces, calling emit for each non-empty one.
type splitter interface {
	split(s string, emit func(piece string))
}

func (p pattern) split(s string, emit func(string)) {
	for i := 0; i < len(s); {
		j := p.next(s, i)
		emit(s[i:j])
		i = j
	}
}

// nativePatterns are the Split regexes of tokenizer.json files that the
// hand-written pre-tokenizer implements exactly, as the files spell them.
var nativePatterns = map[string]pattern{
	// Llama-3, and cl100k_base as tiktoken-go spells it.
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: patCL100k,
	// cl100k_base as tiktoken spells it now (possessive, same language).
	`'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`: patCL100k,
	// Qwen2: one digit a piece.
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: patCL100kDigit,
	// o200k_base.
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`: patO200k,
}

// gpt2Pattern is what a ByteLevel pre-tokenizer with use_regex splits on.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func splitterFor(p *hfPattern, b behavior) (splitter, error) {
	switch {
	case p == nil:
		return nil, unsupported("Split without a pattern")
	case p.Regex != nil:
		if nat, ok := nativePatterns[*p.Regex]; ok && b == isolated {
			return nat, nil
		}
		if gp, ok := deepSeekPatterns[*p.Regex]; ok && b == isolated {
			return gp, nil
		}
		return newRegexSplitter(*p.Regex, b)
	case p.String != nil:
		if *p.String == "" {
			return nil, unsupported("Split on the empty string")
		}
		return literalSplitter{sep: *p.String, behavior: b}, nil
	}
	return nil, unsupported("Split pattern is neither Regex nor String")
}

// cutter turns successive matches in s into pieces by a Split behavior.
type cutter struct {
	s    string
	b    behavior
	last int // end of what has been emitted, or where the next piece starts
	emit func(string)
}

func (c *cutter) match(start, end int) {
	if end == start {
		return // the tokenizers library ignores empty matches
	}
	switch c.b {
	case isolated:
		c.piece(c.last, start)
		c.piece(start, end)
		c.last = end
	case removed:
		c.piece(c.last, start)
		c.last = end
	case mergedWithPrevious:
		c.piece(c.last, end)
		c.last = end
	case mergedWithNext:
		c.piece(c.last, start)
		c.last = start
	}
}

func (c *cutter) done() { c.piece(c.last, len(c.s)) }

func (c *cutter) piece(i, j int) {
	if j > i {
		c.emit(c.s[i:j])
	}
}

// literalSplitter is a Split on a string.
type literalSplitter struct {
	sep      string
	behavior behavior
}

func (l literalSplitter) split(s string, emit func(string)) {
	c := cutter{s: s, b: l.behavior, emit: emit}
	for i := 0; ; {
		k := strings.Index(s[i:], l.sep)
		if k < 0 {
			break
		}
		c.match(i+k, i+k+len(l.sep))
		i += k + len(l.sep)
	}
	c.done()
}

// regexSplitter is the slow path for a Split regex custody does not
// implement by hand: github.com/dlclark/regexp2, a backtracking engine
// with lookaround, like the Oniguruma that Hugging Face tokenizers use,
// but several times slower than the native splitters. Its own Unicode
// classes follow Go's tables (Unicode 15.0), so \p{...} in the pattern is
// first rewritten into the Unicode 16.0 ranges of gc_table.go
// (unicode16Classes).
type regexSplitter struct {
	re       *regexp2.Regexp
	behavior behavior
}

func newRegexSplitter(expr string, b behavior) (*regexSplitter, error) {
	if hasPossessive(expr) {
		return nil, unsupported("possessive quantifier in split regex %q (regexp2 has none)", expr)
	}
	re, err := regexp2.Compile(unicode16Classes(expr), regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compiling split regex: %w", err)
	}
	return &regexSplitter{re: re, behavior: b}, nil
}

func (r *regexSplitter) split(s string, emit func(string)) {
	// regexp2 works on runes and reports rune offsets. Strings reaching
	// here are valid UTF-8, so the runes map back to bytes one to one.
	runes := []rune(s)
	offs := make([]int, len(runes)+1)
	for i, b := 0, 0; i < len(runes); i++ {
		offs[i] = b
		b += utf8.RuneLen(runes[i])
		offs[i+1] = b
	}
	c := cutter{s: s, b: r.behavior, emit: emit}
	m, err := r.re.FindRunesMatch(runes)
	for err == nil && m != nil {
		c.match(offs[m.Index], offs[m.Index+m.Length])
		m, err = r.re.FindNextMatch(m)
	}
	// A regexp2 error is a match timeout, which is never set here; what is
	// left is one more piece either way.
	c.done()
}
