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

// Admission is an engine's own rule for a prompt that fits its context:
// custody refuses before forwarding what the engine would refuse, so the
// refusal is the preflight's (never forwarded), not the engine's.
type Admission int

const (
	// AdmitUpTo admits a prompt of at most the capacity: custody's rule
	// where the engine's own is not known.
	AdmitUpTo Admission = iota
	// AdmitBelow is llama.cpp's server: the prompt must leave room for
	// one generated token, so it has fewer tokens than the context
	// (n_ctx); a prompt of exactly the capacity is refused.
	AdmitBelow
	// AdmitWithOutput is vLLM's: the prompt's tokens plus max_tokens must
	// not exceed max_model_len (without max_tokens, vLLM gives the
	// answer what is left).
	AdmitWithOutput
)

// Limit is the most prompt tokens rule admits in capacity for a request
// asking for maxTokens (0: not given).
func (rule Admission) Limit(capacity, maxTokens int) int {
	switch rule {
	case AdmitBelow:
		return capacity - 1
	case AdmitWithOutput:
		return capacity - max(maxTokens, 0)
	}
	return capacity
}

// Admit fails when a prompt of local tokens (at least) is over rule's
// limit, with a message naming the rule.
func Admit(rule Admission, local, capacity, maxTokens int) error {
	if local <= rule.Limit(capacity, maxTokens) {
		return nil
	}
	switch rule {
	case AdmitBelow:
		return custody.Errorf(custody.CodeContextLengthExceeded,
			"this model's verified capacity is %d tokens, and its engine (llama.cpp) needs room for one generated token; the prompt has at least %d", capacity, local)
	case AdmitWithOutput:
		return custody.Errorf(custody.CodeContextLengthExceeded,
			"this model's verified capacity is %d tokens, which its engine (vLLM) holds the prompt and max_tokens (%d) to; the prompt has at least %d", capacity, maxTokens, local)
	}
	return Capacity(local, capacity)
}
