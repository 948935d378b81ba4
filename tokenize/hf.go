package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unicode/utf8"
)

// ErrUnsupportedTokenizer is wrapped by every error for a tokenizer.json
// that is well-formed but asks for something HFTokenizer does not do; the
// message says what, as in "unsupported: Unigram model (only BPE)".
var ErrUnsupportedTokenizer = errors.New("unsupported")

// maxTokenizerFile bounds what LoadHFTokenizer reads (real ones are a few
// megabytes to a few tens).
const maxTokenizerFile = 256 << 20

// HFTokenizer counts tokens with a Hugging Face tokenizer.json whose model
// is BPE, in either of its two kinds:
//
//   - byte-level (GPT-2, Llama-3, Qwen2, DeepSeek-V3): the pre-tokenizer
//     ends with ByteLevel, after any Split regexes;
//   - SentencePiece-style (Gemma, Llama-2, Mistral): no ByteLevel; the
//     normalizer or a Metaspace pre-tokenizer turns spaces into "▁", the
//     model starts from characters, and with byte_fallback a character
//     outside the vocabulary is its UTF-8 bytes as <0xNN> tokens.
//
// Normalizers may be NFC, NFD, NFKC, NFKD (as the tokenizers library
// computes them: no stream-safe limit on runs of combining marks), Replace
// with a string, Prepend, and Sequences of them. Counts follow the
// tokenizers library exactly: merges by rank in the same heap order.
//
// Count matches the added tokens of tokenizer.json (special or not, such
// as <|im_start|> or <tool_call>) in the text, each as one token, as the
// tokenizers library does; a chat template rendered to text thus counts
// right. It adds no BOS or EOS: SpecialPrefix says how many the tokenizer
// would put before the text.
//
// Split regexes that custody implements by hand (Llama-3's, Qwen2's,
// DeepSeek-V3's, the cl100k and o200k patterns) run at native speed with
// Unicode 16.0 classes; any other runs on regexp2, several times slower,
// with its \p{...} classes rewritten to Unicode 16.0 (see regexSplitter).
// A piece costs O(n log n) in its length: a long one (a megabyte with no
// space or newline) takes about a second.
//
// LlamaCpp returns the variant that counts as llama.cpp's tokenizer does
// with the same vocabulary.
type HFTokenizer struct {
	name        string
	normalizers []normalizer
	// Added tokens found in the text before (rawAdded) and after
	// (normAdded) normalization; nil when there are none.
	rawAdded, normAdded *addedSet
	pre                 []preStep // applied in order, each to every piece of the last
	model               *bpeModel
	prefix              int          // SpecialPrefix
	llamaCpp            *HFTokenizer // the llama.cpp variant; itself in that variant
	scratch             *sync.Pool   // *hfScratch, shared by the variants
}

var _ Counter = (*HFTokenizer)(nil)

// LoadHFTokenizer reads and parses the tokenizer.json at path, and the
// tokenizer_config.json beside it if there is one (its add_bos_token
// decides SpecialPrefix). Its Name is "file:" + path.
func LoadHFTokenizer(path string) (*HFTokenizer, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	config, err := readBounded(filepath.Join(filepath.Dir(path), "tokenizer_config.json"))
	if errors.Is(err, os.ErrNotExist) {
		config, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseHFTokenizerFiles("file:"+path, data, config)
}

func readBounded(path string) ([]byte, error) {
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
		return nil, fmt.Errorf("tokenizer file %s is %d bytes, more than %d", path, st.Size(), maxTokenizerFile)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("reading tokenizer: %w", err)
	}
	return data, nil
}

// The parts of tokenizer.json that matter for counting.
type hfFile struct {
	AddedTokens   []addedToken     `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  *hfPreTokenizer  `json:"pre_tokenizer"`
	PostProcessor *hfPostProcessor `json:"post_processor"`
	Model         hfModel          `json:"model"`
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupportedTokenizer}, args...)...)
}

// ParseHFTokenizer parses a tokenizer.json, without a tokenizer_config.json.
func ParseHFTokenizer(name string, data []byte) (*HFTokenizer, error) {
	return ParseHFTokenizerFiles(name, data, nil)
}

// ParseHFTokenizerFiles parses a tokenizer.json and, unless config is nil,
// its tokenizer_config.json. It refuses, with an error wrapping
// ErrUnsupportedTokenizer, every model but BPE (so Unigram and WordPiece;
// and BPE with dropout, a subword prefix or suffix, or byte_fallback
// without all 256 <0xNN> tokens), normalizers and pre-tokenizers other than
// those HFTokenizer documents, Split regexes with possessive quantifiers,
// and a byte-level vocabulary that lacks any of the 256 byte symbols.
func ParseHFTokenizerFiles(name string, data, config []byte) (*HFTokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing tokenizer.json: %w", err)
	}
	var cfg *hfConfig
	if config != nil {
		var err error
		if cfg, err = parseConfig(config); err != nil {
			return nil, err
		}
	}
	t := &HFTokenizer{name: name, scratch: &sync.Pool{New: func() any { return new(hfScratch) }}}
	var err error
	if t.normalizers, err = parseNormalizer(f.Normalizer, nil); err != nil {
		return nil, err
	}
	steps, byteLevel, err := parsePreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	t.pre = steps
	model, vocab, err := newBPEModel(&f.Model, byteLevel)
	if err != nil {
		return nil, err
	}
	t.model = model
	var raw, normalized []addedToken
	for _, a := range f.AddedTokens {
		if a.Normalized {
			for _, n := range t.normalizers {
				a.Content = n.normalize(a.Content)
			}
			normalized = append(normalized, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.rawAdded, t.normAdded = newAddedSet(raw), newAddedSet(normalized)
	post, err := postPrefix(f.PostProcessor)
	if err != nil {
		return nil, err
	}
	t.prefix = post
	if cfg != nil && cfg.AddBOS != nil {
		// transformers' Llama and Gemma tokenizers rebuild the
		// post-processor from add_bos_token.
		t.prefix = 0
		if *cfg.AddBOS && cfg.hasBOS() {
			t.prefix = 1
		}
	}
	t.llamaCpp = t.newLlamaCpp(f.AddedTokens, vocab, cfg, post)
	return t, nil
}

// Name returns the name it was parsed with: "file:" and the path for
// LoadHFTokenizer.
func (t *HFTokenizer) Name() string { return t.name }

// SpecialPrefix returns how many special tokens the tokenizer puts before
// a text (a BOS, say): for the tokenizers library, what tokenizer.json's
// post_processor adds to a single sequence, unless tokenizer_config.json
// sets add_bos_token; for the LlamaCpp variant, what llama.cpp adds. A
// prompt's count is Count(text) + SpecialPrefix().
func (t *HFTokenizer) SpecialPrefix() int { return t.prefix }

// Count returns the number of tokens of text, added tokens in it included
// and no BOS or EOS added. Invalid UTF-8 is treated as in Encoding.Count.
func (t *HFTokenizer) Count(text string) int { return t.encode(text, nil, -1) }

// CountUpTo is Count, stopping once the count passes limit.
func (t *HFTokenizer) CountUpTo(text string, limit int) (int, bool) {
	return upTo(text, limit, func(s string, limit int) (int, bool) {
		n := t.encode(s, nil, limit)
		return n, n > limit
	})
}

// encode counts the tokens of text and, unless ids is nil, appends their
// ids to *ids. With limit >= 0 it stops merging once the count passes
// limit (the count returned is then some count above it).
func (t *HFTokenizer) encode(text string, ids *[]uint32, limit int) int {
	if !utf8.ValidString(text) {
		text = replaceInvalid(text)
	}
	sc := t.scratch.Get().(*hfScratch)
	n := 0
	var special func(uint32)
	if ids != nil {
		special = func(id uint32) { *ids = append(*ids, id) }
	}
	word := func(piece string, _ bool) {
		if limit >= 0 && n > limit {
			return
		}
		eachChunk(piece, func(c string) bool {
			n += t.model.count(c, sc, ids)
			return limit < 0 || n <= limit
		})
	}
	n += t.rawAdded.split(text, func(seg string, first bool) {
		for _, f := range t.normalizers {
			seg = f.normalize(seg) // returns seg itself when there is nothing to do
		}
		n += t.normAdded.split(seg, func(s string, f bool) { t.pretokenize(s, first && f, 0, word) }, special)
	}, special)
	t.scratch.Put(sc)
	return n
}

// pretokenize applies t.pre[k:] to s and calls emit with each piece.
func (t *HFTokenizer) pretokenize(s string, first bool, k int, emit func(string, bool)) {
	if k == len(t.pre) {
		emit(s, first)
		return
	}
	t.pre[k].split(s, first, func(piece string, f bool) { t.pretokenize(piece, f, k+1, emit) })
}
