package tokenize

import (
	"slices"
	"sort"
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
// rstrip. Real files have from a few dozen to thousands (Gemma-3: 6,415, of
// which 6,322 start with "<"), so a candidate position is one whose byte
// starts some token, and the tokens there are looked up by content, one
// length at a time, longest first.
type addedSet struct {
	starts    [256]bool             // the first bytes of the tokens
	lengths   map[byte][]int        // the tokens' lengths by first byte, longest first
	byContent map[string]addedToken // the first token of each content
	// longestFirst matches as llama.cpp does (splitLongestFirst).
	longestFirst bool
}

func newAddedSet(tokens []addedToken) *addedSet {
	a := &addedSet{lengths: map[byte][]int{}, byContent: map[string]addedToken{}}
	for _, tok := range tokens {
		if tok.Content == "" {
			continue
		}
		if _, dup := a.byContent[tok.Content]; dup {
			continue
		}
		a.byContent[tok.Content] = tok
		b := tok.Content[0]
		a.starts[b] = true
		if !slices.Contains(a.lengths[b], len(tok.Content)) {
			a.lengths[b] = append(a.lengths[b], len(tok.Content))
		}
	}
	if len(a.byContent) == 0 {
		return nil
	}
	for _, ls := range a.lengths {
		sort.Sort(sort.Reverse(sort.IntSlice(ls)))
	}
	return a
}

// next returns the first position from i whose byte starts a token, or -1.
func (a *addedSet) next(s string, i int) int {
	for ; i < len(s); i++ {
		if a.starts[s[i]] {
			return i
		}
	}
	return -1
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
		if i = a.next(s, i); i < 0 {
			break
		}
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
	for _, n := range a.lengths[s[i]] {
		if i+n > len(s) {
			continue
		}
		tok, ok := a.byContent[s[i:i+n]]
		if !ok {
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
		if i = a.next(s, i); i < 0 {
			break
		}
		for _, n := range a.lengths[s[i]] {
			if i+n > len(s) {
				continue
			}
			if tok, ok := a.byContent[s[i:i+n]]; ok {
				occs = append(occs, occurrence{i, i + n, tok.ID})
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
