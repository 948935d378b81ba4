// Package tokenize counts tokens the way the upstream model does, so that
// custody can check the upstream's reported usage against its own count.
//
// Lookup resolves the `tokenizer:` config value: o200k_base, cl100k_base,
// file:PATH (a Hugging Face tokenizer.json) or bytes.
//
// o200k_base and cl100k_base are counted by a pure-Go byte-pair encoder
// (Encoding) whose counts are identical to tiktoken's: its pre-tokenizer
// implements each encoding's split regex by hand (pretokenize.go, with
// Unicode 16.0 classes from class_table.go), and the rank tables come
// from tiktoken-go-loader's embedded files, parsed once on first use and
// shared (ranks.go). file:PATH loads a Hugging Face tokenizer.json with a
// BPE model, byte-level or SentencePiece-style (HFTokenizer), counting as
// the tokenizers library does; its LlamaCpp variant counts as llama.cpp
// does with the same vocabulary. bytes is an upper bound, not a count (see
// UpperBound).
//
// testdata/counts.json holds counts made by the reference tiktoken (npm's
// WASM build) with testdata/gen/gen.js; the tests also compare against
// tiktoken-go, the engine custody used before, on random and fuzzed text.
// HFTokenizer is tested against real tokenizers and real engines' token
// ids (internal/fixtures finds them): a chat prompt as llama.cpp rendered
// it counts, with LlamaCpp().Count(rendered) + LlamaCpp().SpecialPrefix(),
// exactly what llama.cpp counted, id for id, for Llama-3, Llama-3.1,
// Qwen3, DeepSeek-V3 and Gemma-3.
package tokenize

import (
	"fmt"
	"strings"
)

// Counter counts the tokens of a text. Implementations are safe for
// concurrent use.
type Counter interface {
	// Count returns the number of tokens of text, adding no special
	// tokens (no BOS or EOS). Special-token text inside it is the
	// implementation's business: Encoding counts it as ordinary text,
	// HFTokenizer as the one token it names.
	Count(text string) int
	// Name is the config value that selects this counter.
	Name() string
}

// UpperBound is implemented by a Counter whose Count is an upper bound on
// the model's token count rather than the count itself. A caller checking
// an upstream's reported usage must then accept any report at or below the
// bound (plus framing), not demand the count: find it by type assertion,
//
//	if ub, ok := c.(tokenize.UpperBound); ok && ub.UpperBound() { ... }
type UpperBound interface {
	UpperBound() bool
}

// DefaultName is the tokenizer of a model that names none, and of the
// simulator and canaries when they are given no counter.
const DefaultName = "o200k_base"

// Default returns the DefaultName counter (its tables are parsed once and
// shared).
func Default() (Counter, error) { return Lookup(DefaultName) }

// Lookup returns the counter named by spec.
func Lookup(spec string) (Counter, error) {
	switch {
	case spec == "o200k_base" || spec == "cl100k_base":
		e, err := NewEncoding(spec)
		if err != nil {
			return nil, err
		}
		return e, nil
	case spec == "bytes":
		return Bytes{}, nil
	case strings.HasPrefix(spec, "file:"):
		t, err := LoadHFTokenizer(strings.TrimPrefix(spec, "file:"))
		if err != nil {
			return nil, fmt.Errorf("tokenizer %q: %w", spec, err)
		}
		return t, nil
	}
	return nil, fmt.Errorf("unknown tokenizer %q (want o200k_base, cl100k_base, file:PATH or bytes)", spec)
}

// Bytes counts one token per byte. For any byte-level BPE (every tokenizer
// custody knows) that is an upper bound on the count of valid UTF-8, never
// the count: each token is at least one byte. It is for models whose
// tokenizer custody does not have, and it reports UpperBound() == true: a
// prompt-token band check must then accept an upstream count anywhere in
// [0, Count + framing] rather than demand [Count, Count + slack], and a
// capacity check that rejects on it may reject a prompt that would fit.
type Bytes struct{}

func (Bytes) Count(text string) int { return len(text) }
func (Bytes) Name() string          { return "bytes" }

// UpperBound reports that Count is an upper bound, not a count.
func (Bytes) UpperBound() bool { return true }

var _ UpperBound = Bytes{}

// Message is the part of a chat message that counts towards prompt tokens.
type Message struct {
	Role    string
	Name    string
	Content string
}

// OpenAI's accounting of chat prompts (the "num_tokens_from_messages"
// recipe): every message costs 3 tokens of framing, a name 1 more, and the
// reply is primed with 3.
const (
	TokensPerMessage = 3
	TokensPerName    = 1
	ReplyPriming     = 3
)

// Chat counts a chat prompt as OpenAI bills it.
func Chat(c Counter, msgs []Message) int {
	n := ReplyPriming
	for _, m := range msgs {
		n += TokensPerMessage + c.Count(m.Role) + c.Count(m.Content)
		if m.Name != "" {
			n += TokensPerName + c.Count(m.Name)
		}
	}
	return n
}
