package custody

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// BoundLimit is the most bytes a string an upstream or a client chose
// may take in a transaction's record (and so its leaf): the response's
// model, id and system_fingerprint, the requested model, and every
// outcome detail. Real ones are far shorter (ids and fingerprints of
// OpenAI, Anthropic, vLLM and llama.cpp are under 64 bytes, model names
// under 100), and 256 keeps a leaf of 4 identity strings and a dozen
// details well inside the ledger's 64 KiB (a gateway leaf is ~1.3 KB).
const BoundLimit = 256

// boundMark separates a bounded string's prefix from the digest of the
// whole.
const boundMark = "...sha256:"

// boundPrefix is the most bytes of the original a bounded string keeps:
// the rest of BoundLimit is the mark and 64 hex digits.
const boundPrefix = BoundLimit - len(boundMark) - 2*sha256.Size

// Bound returns s if it is at most BoundLimit bytes; else s's longest
// prefix of whole runes within 182 bytes (an invalid byte written as
// U+FFFD), then "...sha256:" and the lowercase hex SHA-256 of the whole
// of s: at most BoundLimit bytes, valid UTF-8, and an auditor holding the
// original can match it (IsBoundOf). Bound of a bounded string is itself.
func Bound(s string) string {
	if len(s) <= BoundLimit {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	var b strings.Builder
	b.Grow(BoundLimit)
	// Whole runes only; an invalid byte is U+FFFD, as the leaf's JSON
	// encoding writes it, so the bounded string is what the leaf holds.
	for _, r := range s {
		if b.Len()+utf8.RuneLen(r) > boundPrefix {
			break
		}
		b.WriteRune(r)
	}
	b.WriteString(boundMark)
	b.WriteString(hex.EncodeToString(sum[:]))
	return b.String()
}

// ParseBound splits a string in Bound's long form into the prefix it
// kept and the SHA-256 of the original; ok is false for any other string
// (one within the limit as it came). An upstream can send a string that
// looks bounded: only IsBoundOf, with the original, says it is.
func ParseBound(s string) (prefix string, sum [sha256.Size]byte, ok bool) {
	if len(s) > BoundLimit || len(s) < len(boundMark)+2*sha256.Size {
		return "", sum, false
	}
	tail := s[len(s)-2*sha256.Size:]
	head, found := strings.CutSuffix(s[:len(s)-len(tail)], boundMark)
	if !found || strings.ToLower(tail) != tail {
		return "", sum, false
	}
	if _, err := hex.Decode(sum[:], []byte(tail)); err != nil {
		return "", sum, false
	}
	return head, sum, true
}

// IsBoundOf reports whether b, read from a record, is what Bound makes
// of original: original itself if it was within the limit, else its
// prefix and digest.
func IsBoundOf(b, original string) bool {
	return Bound(original) == b
}

// Bound bounds, in place, every string of t that an upstream or a client
// chose (Bound): the requested and response models, the response id and
// system_fingerprint, the use case and every outcome's detail. Names
// from the operator's configuration (provider, region, route model,
// policy) are left as they are.
func (t *Transaction) Bound() {
	t.RequestedModel = Bound(t.RequestedModel)
	t.ResponseModel = Bound(t.ResponseModel)
	t.Fingerprint = Bound(t.Fingerprint)
	t.ResponseID = Bound(t.ResponseID)
	t.UseCase = Bound(t.UseCase)
	for i := range t.Outcomes {
		t.Outcomes[i].Detail = Bound(t.Outcomes[i].Detail)
	}
}
