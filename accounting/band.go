package accounting

import "fmt"

// Band is the range of usage.prompt_tokens that agrees with a local
// count: what an honest upstream may report (check.PromptTokens refuses
// the rest).
type Band struct{ Lo, Hi int }

func (b Band) String() string { return fmt.Sprintf("[%d,%d]", b.Lo, b.Hi) }

// Contains reports whether reported falls inside the band.
func (b Band) Contains(reported int) bool { return reported >= b.Lo && reported <= b.Hi }

// PromptBand computes the accepted band for a locally counted prompt of
// parts messages: [local, local + perMessage*parts + fixed]. The slack
// covers chat templates, BOS tokens and tool framing that the upstream
// adds and custody does not see. When the count is an upper bound (the
// bytes tokenizer), the band is [local/32, local + slack]: no byte-level
// BPE token spans more than 32 bytes of ordinary text often enough to
// matter, and a one-token placeholder for a long prompt still falls out.
func PromptBand(local int, upperBound bool, parts, perMessage, fixed int) Band {
	hi := local + perMessage*parts + fixed
	if upperBound {
		return Band{Lo: local / 32, Hi: hi}
	}
	return Band{Lo: local, Hi: hi}
}
