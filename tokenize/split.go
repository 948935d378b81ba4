package tokenize

import (
	"fmt"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// splitter cuts a text into pieces that tile it, calling emit for each.
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

// regexSplitter is the slow path for a Split regex custody does not
// implement by hand: github.com/dlclark/regexp2, a backtracking engine
// with lookaround, like the Oniguruma that Hugging Face tokenizers use,
// but several times slower than the native splitters, and its Unicode
// classes follow Go's tables. Matches and the text between them are both
// pieces (the "Isolated" behaviour).
type regexSplitter struct {
	re *regexp2.Regexp
}

func newRegexSplitter(expr string) (*regexSplitter, error) {
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compiling split regex: %w", err)
	}
	return &regexSplitter{re: re}, nil
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
	last := 0
	m, err := r.re.FindRunesMatch(runes)
	for err == nil && m != nil {
		start, end := offs[m.Index], offs[m.Index+m.Length]
		if start > last {
			emit(s[last:start])
			last = start
		}
		if end > start {
			emit(s[start:end])
			last = end
		}
		m, err = r.re.FindNextMatch(m)
	}
	// A regexp2 error is a match timeout, which is never set here; what is
	// left is one more piece either way.
	if last < len(s) {
		emit(s[last:])
	}
}
