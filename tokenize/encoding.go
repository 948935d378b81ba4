package tokenize

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// The rank tables of the two OpenAI encodings, parsed from
// tiktoken-go-loader's embedded files on first use and shared by every
// counter. Reading them is all these values ever do after that.
var (
	o200kRanks  = &lazyRanks{file: "o200k_base.tiktoken"}
	cl100kRanks = &lazyRanks{file: "cl100k_base.tiktoken"}
)

// Encoding counts tokens of a tiktoken encoding (o200k_base, cl100k_base)
// exactly as tiktoken's encode_ordinary does: special tokens in the text
// are counted as ordinary text. Letters, marks, numbers and spaces are
// those of Unicode 16.0, as in tiktoken's regex engine (tiktoken-go, on
// Go's Unicode 15.0, miscounts text in the scripts added since).
// Count allocates nothing for valid UTF-8 and is O(n log n) in the length
// of the longest piece, so no input makes it quadratic.
//
// Text that is not valid UTF-8 counts as if each byte that is not part of
// a valid UTF-8 sequence were U+FFFD, the way Go decodes strings, the way
// encoding/json rewrites such bytes, and the way tiktoken-go counts them.
// (Python's tiktoken never sees invalid UTF-8: it takes a str.)
type Encoding struct {
	name    string
	pattern pattern
	ranks   *rankTable
	scratch sync.Pool // *heapScratch, for long pieces
}

var _ Counter = (*Encoding)(nil)

// NewEncoding returns the counter of the named tiktoken encoding,
// "o200k_base" or "cl100k_base". The first call for an encoding parses its
// embedded rank table (about 30 ms of CPU for o200k_base, and 6 MB held for
// the life of the process); later calls share it.
func NewEncoding(name string) (*Encoding, error) {
	var (
		p pattern
		l *lazyRanks
	)
	switch name {
	case "o200k_base":
		p, l = patO200k, o200kRanks
	case "cl100k_base":
		p, l = patCL100k, cl100kRanks
	default:
		return nil, fmt.Errorf("unknown tiktoken encoding %q", name)
	}
	ranks, err := l.get()
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", name, err)
	}
	return &Encoding{name: name, pattern: p, ranks: ranks, scratch: sync.Pool{New: newHeapScratch}}, nil
}

// Name returns the encoding's name.
func (e *Encoding) Name() string { return e.name }

// Count returns the number of tokens of text.
func (e *Encoding) Count(text string) int {
	n, _ := e.count(text, -1)
	return n
}

// CountUpTo is Count, stopping once the count passes limit.
func (e *Encoding) CountUpTo(text string, limit int) (int, bool) { return upTo(text, limit, e.count) }

func (e *Encoding) count(text string, limit int) (int, bool) {
	if !utf8.ValidString(text) {
		text = replaceInvalid(text)
	}
	n := 0
	for i := 0; i < len(text); {
		j := e.pattern.next(text, i)
		eachChunk(text[i:j], func(c string) bool {
			n += e.pieceCount(c)
			return limit < 0 || n <= limit
		})
		if limit >= 0 && n > limit {
			return n, true
		}
		i = j
	}
	return n, false
}

func (e *Encoding) pieceCount(piece string) int {
	if len(piece) == 1 {
		return 1 // every byte is a token
	}
	if e.ranks.rank(piece) != noRank {
		return 1
	}
	return e.ranks.bpeCount(piece, &e.scratch)
}

// replaceInvalid replaces each byte of s that is not part of a valid UTF-8
// sequence with U+FFFD, as converting s to []rune does.
func replaceInvalid(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
