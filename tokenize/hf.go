package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ErrUnsupportedTokenizer is wrapped by every error for a tokenizer.json
// that is well-formed but asks for something HFTokenizer does not do.
var ErrUnsupportedTokenizer = errors.New("unsupported tokenizer.json")

// maxTokenizerFile bounds what LoadHFTokenizer reads (real ones are a few
// megabytes to a few tens).
const maxTokenizerFile = 256 << 20

// HFTokenizer counts tokens with a Hugging Face tokenizer.json whose model
// is a byte-level BPE (Llama-3, Qwen2, GPT-2 style): pre-tokenizer Split
// with a regex and/or ByteLevel, no normalizer or Unicode normalization
// (NFC and the like, by golang.org/x/text at Unicode 15.0), model BPE with
// vocab and merges. Counts follow the
// tokenizers library's BPE exactly, merges by rank with the same heap
// order. Added (special) tokens are not recognised in the text: like
// tiktoken's encode_ordinary, the text counts as ordinary text.
//
// Split regexes that custody implements by hand (Llama-3's, Qwen2's, the
// cl100k and o200k patterns) run at native speed; any other runs on
// regexp2, several times slower (see regexSplitter).
type HFTokenizer struct {
	name      string
	normalize []norm.Form // Unicode normalizers, in order
	// Added tokens found in the text before (rawAdded) and after
	// (normAdded) normalization; nil when there are none.
	rawAdded, normAdded *addedSet
	splits              []splitter // applied in order, each to every piece of the last
	prefixSpace         bool       // ByteLevel add_prefix_space, applied to each piece
	// byteLevelSplit is ByteLevel's own GPT-2 regex (use_regex), or nil.
	byteLevelSplit splitter
	byteID         [256]uint32
	whole          map[string]uint32 // token bytes -> id, for ignore_merges
	ignoreMerges   bool
	merges         map[uint64]uint64 // left<<32|right -> rank<<32|merged id
	scratch        sync.Pool         // *hfScratch
}

var _ Counter = (*HFTokenizer)(nil)

// LoadHFTokenizer reads and parses the tokenizer.json at path. Its Name is
// "file:" + path.
func LoadHFTokenizer(path string) (*HFTokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening tokenizer: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening tokenizer: %w", err)
	}
	if st.Size() > maxTokenizerFile {
		return nil, fmt.Errorf("tokenizer file is %d bytes, more than %d", st.Size(), maxTokenizerFile)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("reading tokenizer: %w", err)
	}
	return ParseHFTokenizer("file:"+path, data)
}

// The parts of tokenizer.json that matter for counting.
type hfFile struct {
	AddedTokens  []addedToken    `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer *hfPreTokenizer `json:"pre_tokenizer"`
	Model        struct {
		Type                    string            `json:"type"`
		Dropout                 *float64          `json:"dropout"`
		ContinuingSubwordPrefix string            `json:"continuing_subword_prefix"`
		EndOfWordSuffix         string            `json:"end_of_word_suffix"`
		ByteFallback            bool              `json:"byte_fallback"`
		IgnoreMerges            bool              `json:"ignore_merges"`
		Vocab                   map[string]int64  `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
	} `json:"model"`
}

type hfNormalizer struct {
	Type        string            `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"`
}

type hfPreTokenizer struct {
	Type           string            `json:"type"`
	PreTokenizers  []*hfPreTokenizer `json:"pretokenizers"`
	Pattern        *hfPattern        `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
}

type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupportedTokenizer}, args...)...)
}

// ParseHFTokenizer parses a tokenizer.json. It refuses, with an error
// wrapping ErrUnsupportedTokenizer, every model but byte-level BPE (no
// dropout, subword prefix or suffix, or byte fallback), any normalizer but
// NFC, NFD, NFKC, NFKD and Sequences of them,
// pre-tokenizers other than Split (Isolated, not inverted) and ByteLevel,
// and a vocabulary that lacks any of the 256 byte symbols.
func ParseHFTokenizer(name string, data []byte) (*HFTokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing tokenizer.json: %w", err)
	}
	m := &f.Model
	switch {
	case m.Type != "BPE":
		return nil, unsupported("model type %q (only BPE)", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, unsupported("BPE dropout")
	case m.ContinuingSubwordPrefix != "" || m.EndOfWordSuffix != "":
		return nil, unsupported("subword prefix or suffix")
	case m.ByteFallback:
		return nil, unsupported("byte_fallback (a SentencePiece-style BPE, not byte-level)")
	}
	t := &HFTokenizer{name: name, ignoreMerges: m.IgnoreMerges}
	t.scratch.New = func() any { return new(hfScratch) }
	if err := t.setNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	var raw, normalized []addedToken
	for _, a := range f.AddedTokens {
		if a.Normalized {
			for _, form := range t.normalize {
				a.Content = form.String(a.Content)
			}
			normalized = append(normalized, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.rawAdded, t.normAdded = newAddedSet(raw), newAddedSet(normalized)
	if err := t.setPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := t.setVocab(m.Vocab); err != nil {
		return nil, err
	}
	if err := t.setMerges(m.Vocab, m.Merges); err != nil {
		return nil, err
	}
	return t, nil
}

// normalForms are the normalizers HFTokenizer applies (Qwen2 uses NFC).
var normalForms = map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}

func (t *HFTokenizer) setNormalizer(raw json.RawMessage) error {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil
	}
	var n hfNormalizer
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("parsing normalizer: %w", err)
	}
	if n.Type == "Sequence" {
		for _, sub := range n.Normalizers {
			if err := t.setNormalizer(sub); err != nil {
				return err
			}
		}
		return nil
	}
	f, ok := normalForms[n.Type]
	if !ok {
		return unsupported("normalizer %q (only NFC, NFD, NFKC, NFKD)", n.Type)
	}
	t.normalize = append(t.normalize, f)
	return nil
}

func (t *HFTokenizer) setPreTokenizer(p *hfPreTokenizer) error {
	if p == nil {
		return unsupported("no pre_tokenizer (a byte-level BPE needs ByteLevel)")
	}
	steps := []*hfPreTokenizer{p}
	if p.Type == "Sequence" {
		steps = p.PreTokenizers
	}
	byteLevel := false
	for i, s := range steps {
		if s == nil {
			return unsupported("null pre-tokenizer")
		}
		switch s.Type {
		case "Split":
			if byteLevel {
				return unsupported("Split after ByteLevel")
			}
			if s.Behavior != "Isolated" || s.Invert {
				return unsupported("Split behavior %q invert %v (only Isolated)", s.Behavior, s.Invert)
			}
			sp, err := splitterFor(s.Pattern)
			if err != nil {
				return err
			}
			t.splits = append(t.splits, sp)
		case "ByteLevel":
			if i != len(steps)-1 {
				return unsupported("pre-tokenizer after ByteLevel")
			}
			byteLevel = true
			t.prefixSpace = s.AddPrefixSpace
			if s.UseRegex == nil || *s.UseRegex { // the library's default is true
				re, err := newRegexSplitter(gpt2Pattern)
				if err != nil {
					return err
				}
				t.byteLevelSplit = re
			}
		default:
			return unsupported("pre-tokenizer %q", s.Type)
		}
	}
	if !byteLevel {
		return unsupported("no ByteLevel pre-tokenizer (not a byte-level BPE)")
	}
	return nil
}

func splitterFor(p *hfPattern) (splitter, error) {
	switch {
	case p == nil:
		return nil, unsupported("Split without a pattern")
	case p.Regex != nil:
		if nat, ok := nativePatterns[*p.Regex]; ok {
			return nat, nil
		}
		return newRegexSplitter(*p.Regex)
	case p.String != nil:
		if *p.String == "" {
			return nil, unsupported("Split on the empty string")
		}
		return newRegexSplitter(regexp2Quote(*p.String))
	}
	return nil, unsupported("Split pattern is neither Regex nor String")
}

// regexp2Quote escapes s to match itself.
func regexp2Quote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$#&-~ `, r) || r < ' ' {
			fmt.Fprintf(&b, `\x{%x}`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (t *HFTokenizer) setVocab(vocab map[string]int64) error {
	runes := byteLevelRunes()
	inverse := make(map[rune]byte, 256)
	for b, r := range runes {
		inverse[r] = byte(b)
	}
	for b, r := range runes {
		id, ok := vocab[string(r)]
		if !ok {
			return unsupported("vocab lacks the byte symbol %q for byte 0x%02x", string(r), b)
		}
		if id < 0 || id > math.MaxInt32 {
			return fmt.Errorf("vocab id %d out of range", id)
		}
		t.byteID[b] = uint32(id)
	}
	t.whole = make(map[string]uint32, len(vocab))
	var buf []byte
	for tok, id := range vocab {
		if id < 0 || id > math.MaxInt32 {
			return fmt.Errorf("vocab id %d out of range", id)
		}
		if raw, ok := byteLevelDecode(tok, inverse, buf); ok {
			t.whole[string(raw)] = uint32(id)
			buf = raw
		}
	}
	return nil
}

// setMerges builds the pair table as the tokenizers library does: rank is
// the merge's index in the list, and a later duplicate pair wins.
func (t *HFTokenizer) setMerges(vocab map[string]int64, merges []json.RawMessage) error {
	if len(merges) > math.MaxInt32 {
		return fmt.Errorf("too many merges")
	}
	t.merges = make(map[uint64]uint64, len(merges))
	for rank, raw := range merges {
		a, b, err := parseMerge(raw)
		if err != nil {
			return fmt.Errorf("merge %d: %w", rank, err)
		}
		ida, oka := vocab[a]
		idb, okb := vocab[b]
		idab, okab := vocab[a+b]
		if !oka || !okb || !okab {
			return fmt.Errorf("merge %d (%q %q): token not in vocab", rank, a, b)
		}
		t.merges[uint64(ida)<<32|uint64(idb)] = uint64(rank)<<32 | uint64(idab)
	}
	return nil
}

// parseMerge reads a merge in either form: "a b" or ["a", "b"].
func parseMerge(raw json.RawMessage) (string, string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		a, b, ok := strings.Cut(s, " ")
		if !ok || strings.Contains(b, " ") {
			return "", "", fmt.Errorf("merge %q is not two tokens", s)
		}
		return a, b, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil {
		return "", "", fmt.Errorf("merge is neither a string nor a pair: %w", err)
	}
	if len(pair) != 2 {
		return "", "", fmt.Errorf("merge has %d tokens, not 2", len(pair))
	}
	return pair[0], pair[1], nil
}

// Name returns "file:" and the path it was loaded from.
func (t *HFTokenizer) Name() string { return t.name }

// Count returns the number of tokens of text. Invalid UTF-8 is treated as
// in Encoding.Count.
func (t *HFTokenizer) Count(text string) int {
	if !utf8.ValidString(text) {
		text = replaceInvalid(text)
	}
	sc := t.scratch.Get().(*hfScratch)
	n := 0
	piece := func(piece string) { n += t.pieceCount(piece, sc) }
	pretokenize := func(s string) { t.splitAll(s, 0, sc, piece) }
	n += t.rawAdded.split(text, func(s string) {
		for _, f := range t.normalize {
			s = f.String(s) // returns s itself when already normal
		}
		n += t.normAdded.split(s, pretokenize)
	})
	t.scratch.Put(sc)
	return n
}

// splitAll applies t.splits[k:] and then ByteLevel to s.
func (t *HFTokenizer) splitAll(s string, k int, sc *hfScratch, emit func(string)) {
	if k < len(t.splits) {
		t.splits[k].split(s, func(piece string) { t.splitAll(piece, k+1, sc, emit) })
		return
	}
	if t.prefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	if t.byteLevelSplit != nil {
		t.byteLevelSplit.split(s, emit)
		return
	}
	emit(s)
}
