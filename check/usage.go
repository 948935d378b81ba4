package check

import (
	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

// MaxUsageTokens bounds every count of a usage report. No model reads or
// writes 2^24 (16.7 million) tokens in one exchange (the longest context
// windows are under a tenth of it); a count past it, or below zero, is
// not an account of this exchange but an upstream fault, and recording
// it as verified would put a lie in the ledger and in whoever bills from
// it.
const MaxUsageTokens = 1 << 24

// Usage fails on a usage report whose counts are negative or past
// MaxUsageTokens, or whose cached tokens exceed its prompt tokens. nil
// passes.
func Usage(u *openai.Usage) error {
	if u == nil {
		return nil
	}
	for _, c := range [...]struct {
		name string
		n    int
	}{{"prompt_tokens", u.PromptTokens}, {"completion_tokens", u.CompletionTokens},
		{"total_tokens", u.TotalTokens}, {"cached_tokens", u.Cached()}} {
		if c.n < 0 || c.n > MaxUsageTokens {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream reported %s out of range (%d)", c.name, c.n)
		}
	}
	return nil
}
