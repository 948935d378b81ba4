package tokenize

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json's added_tokens: a string that
// the tokenizers library cuts out of the text before anything else and
// encodes as one token, special or not.
type addedToken struct {
	ID         uint32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
}

// addedSet finds added tokens in a text as the tokenizers library's
// AddedVocabulary does: leftmost-longest, honouring single_word, lstrip and
// rstrip. Real files have a few hundred, nearly all starting with "<" or
// "[", so candidates are found by their first byte.
type addedSet struct {
	byFirst map[byte][]addedToken // longest first
	firsts  string                // the first bytes, for strings.IndexAny
	// longestFirst matches as llama.cpp does (splitLongestFirst).
	longestFirst bool
}

func newAddedSet(tokens []addedToken) *addedSet {
	a := &addedSet{byFirst: map[byte][]addedToken{}}
	for _, tok := range tokens {
		if tok.Content == "" {
			continue
		}
		b := tok.Content[0]
		if len(a.byFirst[b]) == 0 {
			if b >= utf8.RuneSelf {
				// IndexAny takes runes; a non-ASCII first byte is found
				// through the whole first rune instead.
				r, _ := utf8.DecodeRuneInString(tok.Content)
				a.firsts += string(r)
			} else {
				a.firsts += string(rune(b))
			}
		}
		a.byFirst[b] = append(a.byFirst[b], tok)
	}
	if len(a.byFirst) == 0 {
		return nil
	}
	for _, toks := range a.byFirst {
		sort.SliceStable(toks, func(i, j int) bool { return len(toks[i].Content) > len(toks[j].Content) })
	}
	return a
}

// split calls plain with each non-empty stretch of s between added
// tokens, saying whether it starts s, and special (unless nil) with the id
// of each added token, in text order; it returns how many added tokens it
// found.
func (a *addedSet) split(s string, plain func(seg string, first bool), special func(id uint32)) int {
	if a == nil {
		if s != "" {
			plain(s, true)
		}
		return 0
	}
	if a.longestFirst {
		return a.splitLongestFirst(s, plain, special)
	}
	found, last := 0, 0 // last: end of the previous token, stripping included
	for i := 0; i < len(s); {
		k := strings.IndexAny(s[i:], a.firsts)
		if k < 0 {
			break
		}
		i += k
		tok, ok := a.match(s, i)
		if !ok {
			i++
			continue
		}
		start, stop := i, i+len(tok.Content)
		if tok.LStrip {
			for start > last {
				r, n := utf8.DecodeLastRuneInString(s[:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= n
			}
		}
		if tok.RStrip {
			for stop < len(s) {
				r, n := utf8.DecodeRuneInString(s[stop:])
				if !unicode.IsSpace(r) {
					break
				}
				stop += n
			}
		}
		if start > last {
			plain(s[last:start], last == 0)
		}
		if special != nil {
			special(tok.ID)
		}
		found++
		last, i = stop, stop
	}
	if last < len(s) {
		plain(s[last:], last == 0)
	}
	return found
}

// match returns the longest added token at s[i] that may match there.
func (a *addedSet) match(s string, i int) (addedToken, bool) {
	for _, tok := range a.byFirst[s[i]] {
		if !strings.HasPrefix(s[i:], tok.Content) {
			continue
		}
		if tok.SingleWord && (endsWithWord(s[:i]) || startsWithWord(s[i+len(tok.Content):])) {
			continue
		}
		return tok, true
	}
	return addedToken{}, false
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || r == '_'
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordRune(r)
}

// occurrence is an added token found in a text.
type occurrence struct {
	start, end int
	id         uint32
}

// splitLongestFirst is split as llama.cpp's tokenizer_st_partition does
// it: each token in turn, longest first, claims its occurrences left to
// right in what earlier tokens left of the text. Unlike the leftmost-
// longest rule, a longer token wins over a shorter one that overlaps it
// from the left ("ab" and "bcd" in "abcd": a, bcd). Flags are ignored, as
// GGUF has none.
func (a *addedSet) splitLongestFirst(s string, plain func(seg string, first bool), special func(id uint32)) int {
	var occs []occurrence
	for i := 0; i < len(s); i++ {
		k := strings.IndexAny(s[i:], a.firsts)
		if k < 0 {
			break
		}
		i += k
		for _, tok := range a.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], tok.Content) {
				occs = append(occs, occurrence{i, i + len(tok.Content), tok.ID})
			}
		}
	}
	if len(occs) == 0 {
		if s != "" {
			plain(s, true)
		}
		return 0
	}
	sort.SliceStable(occs, func(i, j int) bool {
		li, lj := occs[i].end-occs[i].start, occs[j].end-occs[j].start
		if li != lj {
			return li > lj
		}
		if occs[i].id != occs[j].id {
			return occs[i].id < occs[j].id
		}
		return occs[i].start < occs[j].start
	})
	var taken []occurrence // accepted, by start
	lastEnd, lastID := 0, uint32(0)
	for n, o := range occs {
		if n == 0 || o.id != lastID {
			lastEnd, lastID = 0, o.id
		}
		if o.start < lastEnd {
			continue // inside this token's previous match
		}
		k := sort.Search(len(taken), func(i int) bool { return taken[i].start >= o.start })
		if (k > 0 && taken[k-1].end > o.start) || (k < len(taken) && taken[k].start < o.end) {
			continue // overlaps what a longer token took
		}
		taken = append(taken, occurrence{})
		copy(taken[k+1:], taken[k:])
		taken[k] = o
		lastEnd = o.end
	}
	last := 0
	for _, o := range taken {
		if o.start > last {
			plain(s[last:o.start], last == 0)
		}
		if special != nil {
			special(o.id)
		}
		last = o.end
	}
	if last < len(s) {
		plain(s[last:], last == 0)
	}
	return len(taken)
}
