package check

import (
	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/accounting"
)

// PromptTokens fails when the upstream's reported prompt tokens fall
// outside the band accounting computed: a placeholder substituted for
// the prompt, a silently truncated prompt, or the usage of another
// request.
func PromptTokens(reported int, band accounting.Band) error {
	if !band.Contains(reported) {
		return custody.Errorf(custody.CodePromptTokenMismatch,
			"upstream reported %d prompt tokens; custody counted a prompt allowing %s", reported, band)
	}
	return nil
}
