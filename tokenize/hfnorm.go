package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizer is one step of a tokenizer.json normalizer.
type normalizer interface {
	normalize(s string) string
}

type hfNormalizer struct {
	Type        string            `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"`
	Pattern     *hfPattern        `json:"pattern"`
	Content     string            `json:"content"` // Replace
	Prepend     string            `json:"prepend"` // Prepend
}

// parseNormalizer appends the steps of the normalizer raw to steps.
func parseNormalizer(raw json.RawMessage, steps []normalizer) ([]normalizer, error) {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return steps, nil
	}
	var n hfNormalizer
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("parsing normalizer: %w", err)
	}
	switch n.Type {
	case "Sequence":
		for _, sub := range n.Normalizers {
			var err error
			if steps, err = parseNormalizer(sub, steps); err != nil {
				return nil, err
			}
		}
		return steps, nil
	case "NFC", "NFD", "NFKC", "NFKD":
		return append(steps, unicodeNorm{normalForms[n.Type]}), nil
	case "Replace":
		if n.Pattern == nil || n.Pattern.String == nil || *n.Pattern.String == "" {
			return nil, unsupported("Replace normalizer with a regex or empty pattern (only a string)")
		}
		return append(steps, replaceNorm{old: *n.Pattern.String, new: n.Content}), nil
	case "Prepend":
		return append(steps, prependNorm(n.Prepend)), nil
	}
	return nil, unsupported("normalizer %q (only NFC, NFD, NFKC, NFKD, Replace, Prepend)", n.Type)
}

// normalForms are the Unicode normalizers (Qwen2 uses NFC).
var normalForms = map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}

// replaceNorm is Replace with a string pattern (SentencePiece-style
// tokenizers replace " " with "▁").
type replaceNorm struct{ old, new string }

func (r replaceNorm) normalize(s string) string { return strings.ReplaceAll(s, r.old, r.new) }

// prependNorm is Prepend: the tokenizers library prepends to a non-empty
// string only.
type prependNorm string

func (p prependNorm) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

// cgj is U+034F COMBINING GRAPHEME JOINER. golang.org/x/text inserts it
// after every 30 non-starters (UAX #15's Stream-Safe Text Format), so that
// its buffers stay bounded; the tokenizers library (Rust's
// unicode-normalization) does not, and reorders and composes runs of any
// length. Zalgo text has such runs.
const cgj = "\u034F"

// maxNonStarters is x/text's bound on a run before it inserts cgj.
const maxNonStarters = 30

// unicodeNorm is one of the four normalization forms, as the tokenizers
// library computes it.
type unicodeNorm struct{ form norm.Form }

func (u unicodeNorm) normalize(s string) string {
	out := u.form.String(s) // returns s itself when already normal
	if !strings.Contains(out, cgj) || strings.Count(out, cgj) == strings.Count(s, cgj) {
		return out
	}
	return u.unbounded(s)
}

// unbounded normalizes s without the stream-safe bound. It cuts s before
// each starter that no normalization reaches across, normalizes each
// segment with x/text, and only where x/text added a cgj (a segment with a
// run of more than 30 non-starters) does it by hand, by the textbook
// algorithm: decompose, order the marks canonically, compose.
func (u unicodeNorm) unbounded(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	start := 0
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		if i > start && u.form.PropertiesString(s[i:]).BoundaryBefore() {
			b.WriteString(u.segment(s[start:i]))
			start = i
		}
		i += n
	}
	b.WriteString(u.segment(s[start:]))
	return b.String()
}

func (u unicodeNorm) segment(seg string) string {
	out := u.form.String(seg)
	if strings.Count(out, cgj) == strings.Count(seg, cgj) {
		return out
	}
	decomp, compose := norm.NFD, false
	switch u.form {
	case norm.NFC:
		compose = true
	case norm.NFKC:
		decomp, compose = norm.NFKD, true
	case norm.NFKD:
		decomp = norm.NFKD
	}
	// Decompose rune by rune: one rune's decomposition is short, so x/text
	// never adds a cgj to it.
	var rs []rune
	for _, r := range seg {
		if r < utf8.RuneSelf {
			rs = append(rs, r)
			continue
		}
		rs = append(rs, []rune(decomp.String(string(r)))...)
	}
	ccc := make([]uint8, len(rs))
	for i, r := range rs {
		ccc[i] = combiningClass(r)
	}
	// Canonical ordering: a stable sort of each run of non-starters by
	// combining class (insertion sort keeps equal classes in order).
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && ccc[j] != 0 && ccc[j-1] > ccc[j]; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
			ccc[j], ccc[j-1] = ccc[j-1], ccc[j]
		}
	}
	if compose {
		rs = canonicalCompose(rs, ccc)
	}
	return string(rs)
}

func combiningClass(r rune) uint8 {
	if r < 0x300 {
		return 0
	}
	return norm.NFD.PropertiesString(string(r)).CCC()
}

// canonicalCompose is UAX #15's canonical composition of a decomposed,
// canonically ordered text: each character joins the last starter when
// nothing between them blocks it and the two have a primary composite.
func canonicalCompose(rs []rune, ccc []uint8) []rune {
	out := rs[:0]
	starter, lastCCC := -1, uint8(0)
	for i, r := range rs {
		c := ccc[i]
		if starter >= 0 && (starter == len(out)-1 || (lastCCC != 0 && lastCCC < c)) {
			if p, ok := primaryComposite(out[starter], r); ok {
				out[starter] = p
				continue
			}
		}
		if c == 0 {
			starter = len(out)
		}
		out = append(out, r)
		lastCCC = c
	}
	return out
}

// primaryComposite returns the composite of starter a and b. Since every
// mark already composed into a has a class no greater than b's, NFC of
// the pair is one rune exactly when the pair composes.
func primaryComposite(a, b rune) (rune, bool) {
	s := norm.NFC.String(string(a) + string(b))
	r, n := utf8.DecodeRuneInString(s)
	if n != len(s) {
		return 0, false
	}
	return r, true
}
