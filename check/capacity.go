package check

import "github.com/custody-gateway/custody"

// MustCount reports whether a prompt of promptLen bytes must be counted
// before it is forwarded. Every token of a byte-level BPE (and of a
// SentencePiece one with byte fallback) covers at least one byte, so a
// prompt no longer than capacity bytes cannot exceed it: it is forwarded
// at once and counted concurrently. promptLen is the rendered prompt's
// length where custody renders it (a template may add more tokens than
// the request's JSON has bytes: Qwen3's tool instructions), else the
// body's, which holds at least as many bytes as the prompt's tokens plus
// OpenAI's framing.
func MustCount(promptLen, capacity int) bool { return promptLen > capacity }

// Capacity fails when the locally counted prompt exceeds the model's
// verified capacity: such a prompt is never forwarded, because a serving
// stage may truncate it or replace it with a placeholder and still
// answer 200. local may be a count stopped once past capacity: the
// prompt has at least that many tokens.
func Capacity(local, capacity int) error {
	if local > capacity {
		return custody.Errorf(custody.CodeContextLengthExceeded,
			"this model's verified capacity is %d tokens; the prompt has at least %d", capacity, local)
	}
	return nil
}
