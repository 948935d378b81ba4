package contamination

import (
	"unicode"
	"unicode/utf8"
)

// normalizer turns raw text into the normalised stream both mechanisms read.
// It is incremental: text may be fed in pieces split anywhere, even inside a
// UTF-8 sequence, and the result is the same as feeding it whole.
//
// The normalisation, which the fingerprints and the secrets share:
//   - A word is a maximal run of letters, digits and combining marks
//     (Unicode L, N, M). A Han, Hiragana, Katakana or Hangul rune is a word on
//     its own, since those scripts do not put spaces between words.
//   - Words are lowercased with unicode.ToLower (simple case mapping).
//   - Everything else (spaces, punctuation, symbols, controls, invalid
//     UTF-8) is a separator, and any run of separators counts as one.
//
// The normalised text is the words, each followed by a single space when a
// separator followed it in the input: "Hello,\n  WORLD!" is "hello world ".
// Each word is also hashed with the keyed SipHash into a word hash, from
// which the k-grams are built.
type normalizer struct {
	k0, k1    uint64
	h         sip     // hash of the current word so far
	inWord    bool    // h holds at least one byte
	afterWord bool    // the last normalised byte was part of a word
	pend      [4]byte // start of a UTF-8 sequence split by a chunk boundary
	npend     int
	noHash    bool // only the normalised bytes are wanted (secrets)

	// Shape of the current word, for isNonce.
	wlen  int
	kind  byte // 'a' letter, '0' digit, 0 none yet, 'x' not ASCII
	flips int  // letter/digit alternations
}

// A word hash has its low bit set when the word looks like a nonce: at least
// nonceMinLen ASCII letters and digits with at least nonceMinFlips
// alternations between them ("k9xbq2mz7w", "q01x0001", "3fa85f64"), the
// random tokens, ids and keys that no two prompts share by chance. Version
// strings and identifiers ("python311", "sha256sum", "windows10") alternate
// too rarely to count. The other 63 bits are the SipHash of the word.
const (
	nonceMinLen   = 8
	nonceMinFlips = 3
)

func isNonceHash(w uint64) bool { return w&1 != 0 }

func newNormalizer(k0, k1 uint64) normalizer {
	n := normalizer{k0: k0, k1: k1}
	n.h.reset(k0, k1)
	return n
}

// feed normalises p, appending the hash of every word that ends inside p to
// words and, when out is not nil, the normalised bytes to out.
func (n *normalizer) feed(p []byte, words *[]uint64, out *[]byte) {
	// Finish a sequence split by the previous chunk, one byte at a time, as
	// the loop below would have decoded it: an invalid sequence decodes one
	// byte at a time, and the bytes after it start the next sequence.
	for n.npend > 0 {
		for n.npend > 0 && utf8.FullRune(n.pend[:n.npend]) {
			r, size := utf8.DecodeRune(n.pend[:n.npend])
			n.rune(r, words, out)
			n.npend = copy(n.pend[:], n.pend[size:n.npend])
		}
		if n.npend == 0 || len(p) == 0 {
			break
		}
		n.pend[n.npend] = p[0]
		n.npend++
		p = p[1:]
	}
	if n.npend > 0 {
		return // p is used up and the sequence is still incomplete
	}
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z':
				n.wordByte(c, 'a', out)
			case '0' <= c && c <= '9':
				n.wordByte(c, '0', out)
			case 'A' <= c && c <= 'Z':
				n.wordByte(c+'a'-'A', 'a', out)
			default:
				n.separator(words, out)
			}
			i++
			continue
		}
		if !utf8.FullRune(p[i:]) {
			n.npend = copy(n.pend[:], p[i:])
			return
		}
		r, size := utf8.DecodeRune(p[i:])
		n.rune(r, words, out)
		i += size
	}
}

// finish ends the text: a pending partial rune is a separator, and the last
// word ends.
func (n *normalizer) finish(words *[]uint64, out *[]byte) {
	n.npend = 0
	n.endWord(words)
}

func (n *normalizer) rune(r rune, words *[]uint64, out *[]byte) {
	switch {
	case r == utf8.RuneError:
		n.separator(words, out)
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		n.endWord(words)
		n.wordRune(r, out)
		n.endWord(words)
	case unicode.In(r, unicode.L, unicode.N, unicode.M):
		n.wordRune(unicode.ToLower(r), out)
	default:
		n.separator(words, out)
	}
}

func (n *normalizer) wordRune(r rune, out *[]byte) {
	var b [utf8.UTFMax]byte
	size := utf8.EncodeRune(b[:], r)
	k := byte('x')
	switch {
	case 'a' <= r && r <= 'z':
		k = 'a'
	case '0' <= r && r <= '9':
		k = '0'
	}
	for _, c := range b[:size] {
		n.wordByte(c, k, out)
	}
}

// wordByte adds byte c of a word; k is its kind for isNonceHash: 'a' an
// ASCII letter, '0' a digit, 'x' anything else.
func (n *normalizer) wordByte(c, k byte, out *[]byte) {
	if !n.noHash {
		n.h.writeByte(c)
		if n.kind != k {
			if n.kind != 0 && n.kind != 'x' && k != 'x' {
				n.flips++
			}
			if n.kind != 'x' {
				n.kind = k
			}
		}
		n.wlen++
	}
	n.inWord, n.afterWord = true, true
	if out != nil {
		*out = append(*out, c)
	}
}

func (n *normalizer) separator(words *[]uint64, out *[]byte) {
	n.endWord(words)
	if n.afterWord {
		n.afterWord = false
		if out != nil {
			*out = append(*out, ' ')
		}
	}
}

func (n *normalizer) endWord(words *[]uint64) {
	if !n.inWord {
		return
	}
	w := n.h.sum() &^ 1
	if n.kind != 'x' && n.wlen >= nonceMinLen && n.flips >= nonceMinFlips {
		w |= 1
	}
	*words = append(*words, w)
	n.h.reset(n.k0, n.k1)
	n.inWord = false
	n.wlen, n.kind, n.flips = 0, 0, 0
}

// normalizeString returns the normalised form of s with no trailing space,
// as secrets are matched.
func normalizeString(s string) []byte {
	n := newNormalizer(0, 0)
	n.noHash = true
	var words []uint64
	out := make([]byte, 0, len(s))
	n.feed([]byte(s), &words, &out)
	n.finish(&words, &out)
	for len(out) > 0 && out[len(out)-1] == ' ' {
		out = out[:len(out)-1]
	}
	return out
}
