package tokenize

import (
	"strings"
	"unicode/utf8"
)

// MaxPiece bounds the text one byte-pair merge runs over. A merge is
// O(n log n) in its piece with a large constant, and a prompt of one
// unbroken word is one piece: a 30 MB word took 14 s and 1.2 GB. A piece
// longer than MaxPiece is counted in chunks of at most MaxPiece bytes,
// cut after a space or newline where one is near the end of the chunk,
// else at a character boundary. Tokens cannot span a cut, so a chunked
// count may differ from the engine's by a token or two per cut:
// ChunkSlack bounds that.
const MaxPiece = 64 << 10

// ChunkSlack is how far a count of n bytes of text may be from the
// engine's because of MaxPiece cuts: 4 tokens per cut a text that long
// could have. Texts up to MaxPiece are counted exactly (0).
func ChunkSlack(n int) int { return 4 * (n / MaxPiece) }

// Limited is implemented by counters that can stop once a count passes a
// limit: a capacity check needs no more, and refusing a 32 MiB prompt
// then costs what counting its first capacity's worth of tokens does.
type Limited interface {
	// CountUpTo returns Count(text) when it is at most limit (over is
	// false), else some count above limit with over true.
	CountUpTo(text string, limit int) (n int, over bool)
}

var (
	_ Limited = (*Encoding)(nil)
	_ Limited = (*HFTokenizer)(nil)
)

// CountUpTo counts with c up to limit, by CountUpTo where c has it.
func CountUpTo(c Counter, text string, limit int) (int, bool) {
	if l, ok := c.(Limited); ok {
		return l.CountUpTo(text, limit)
	}
	n := c.Count(text)
	return n, n > limit
}

// prefixSlack bounds how many more tokens a prefix of a text may count
// than the text itself: the cut changes only the last pieces (a split
// regex's lookahead reaches one piece back) and the last chunk.
const prefixSlack = 4

// upTo decides CountUpTo for a text much longer than limit tokens could
// need, on a prefix first: splitting a 30 MiB word into pieces is itself
// a pass over all of it. A prefix of 8 bytes a token usually holds more
// than limit tokens, and if it counts past limit + prefixSlack the text
// does too. Otherwise the whole text is counted.
func upTo(text string, limit int, count func(string, int) (int, bool)) (int, bool) {
	if probe := 8 * (limit + prefixSlack + 1); limit >= 0 && len(text) > 2*probe {
		cut := probe
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		if n, over := count(text[:cut], limit+prefixSlack); over {
			return n - prefixSlack, true
		}
	}
	return count(text, limit)
}

// eachChunk calls f with piece in chunks of at most MaxPiece bytes,
// until f returns false.
func eachChunk(piece string, f func(string) bool) {
	for len(piece) > MaxPiece {
		cut := MaxPiece
		// Prefer to cut after a space or newline in the chunk's last 4 KiB
		// (or a SentencePiece "▁"): merges rarely cross one.
		if i := strings.LastIndexAny(piece[MaxPiece-4096:MaxPiece], " \n\t"); i >= 0 {
			cut = MaxPiece - 4096 + i + 1
		} else if i := strings.LastIndex(piece[MaxPiece-4096:MaxPiece], "▁"); i >= 0 {
			cut = MaxPiece - 4096 + i
		}
		for cut > 0 && !utf8.RuneStart(piece[cut]) {
			cut--
		}
		if cut == 0 {
			cut = MaxPiece // no rune start: invalid text was replaced, cannot happen
		}
		if !f(piece[:cut]) {
			return
		}
		piece = piece[cut:]
	}
	if piece != "" {
		f(piece)
	}
}
