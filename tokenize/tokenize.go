// Package tokenize counts tokens the way the upstream model does, so that
// custody can check the upstream's reported usage against its own count.
//
// Lookup resolves the `tokenizer:` config value: o200k_base, cl100k_base,
// file:PATH (a Hugging Face tokenizer.json) or bytes.
package tokenize

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts the tokens of a text. Implementations are safe for
// concurrent use.
type Counter interface {
	// Count returns the number of tokens of text, with no special tokens.
	Count(text string) int
	// Name is the config value that selects this counter.
	Name() string
}

var loaderOnce sync.Once

// Lookup returns the counter named by spec.
func Lookup(spec string) (Counter, error) {
	switch {
	case spec == "o200k_base" || spec == "cl100k_base":
		loaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
		enc, err := tiktoken.GetEncoding(spec)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", spec, err)
		}
		return &tiktokenCounter{name: spec, enc: enc}, nil
	case spec == "bytes":
		return Bytes{}, nil
	case strings.HasPrefix(spec, "file:"):
		return nil, fmt.Errorf("tokenizer %q: tokenizer.json files are not supported yet", spec)
	}
	return nil, fmt.Errorf("unknown tokenizer %q (want o200k_base, cl100k_base, file:PATH or bytes)", spec)
}

type tiktokenCounter struct {
	name string
	enc  *tiktoken.Tiktoken
}

func (c *tiktokenCounter) Count(text string) int { return len(c.enc.EncodeOrdinary(text)) }
func (c *tiktokenCounter) Name() string          { return c.name }

// Bytes counts one token per byte: an upper bound for any byte-level BPE,
// for models whose tokenizer custody does not have.
type Bytes struct{}

func (Bytes) Count(text string) int { return len(text) }
func (Bytes) Name() string          { return "bytes" }

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
