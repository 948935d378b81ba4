package canary

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// needleHead is the needle prompt's instruction.
const needleHead = "Below is a long text with codes hidden in it. Repeat every code you find, in order, and nothing else."

// needleBudget is the needle prompt's size in tokens.
func (r *Runner) needleBudget(t Target) int {
	budget := int(r.cfg.NeedleFraction * float64(t.Capacity()))
	if r.cfg.NeedleMaxTokens > 0 {
		budget = min(budget, r.cfg.NeedleMaxTokens)
	}
	return budget
}

// probeNeedle plants nonces at several depths of a long prompt sized to a
// fraction of the route's verified capacity and asks for them back. The
// long-prompt path is where a stack that cannot hold a prompt substitutes
// a placeholder and decodes from whatever the pages hold: the needles do
// not come back (and custody's prompt-token band rejects the answer).
func (r *Runner) probeNeedle(ctx context.Context, t Target) ProbeResult {
	budget := r.needleBudget(t)
	needles := make([]string, len(r.cfg.NeedleDepths))
	for i := range needles {
		needles[i] = nonce(10)
	}
	m, tokens, err := haystack(r.counterFor(t), budget, needleHead, needles, r.cfg.NeedleDepths)
	if errors.Is(err, errTooSmall) {
		return skip(ProbeNeedle, "%s", r.needleTooSmall(t, tokens))
	}
	if err != nil {
		return fail(ProbeNeedle, "capacity %d: %s", t.Capacity(), errText(err))
	}
	a, f := ask(ctx, t, ProbeNeedle, ChatRequest{
		Messages:    []Message{m},
		Temperature: zero(),
		MaxTokens:   len(needles) + 8,
	})
	if f != nil {
		f.Evidence += fmt.Sprintf(" (%d-token prompt)", tokens)
		return *f
	}
	got := nonceLike(a.Text)
	var missing []string
	for i, n := range needles {
		if !slices.Contains(got, n) {
			missing = append(missing, fmt.Sprintf("%.0f%%", 100*r.cfg.NeedleDepths[i]))
		}
	}
	if len(missing) > 0 {
		return fail(ProbeNeedle, "%d/%d needles missing (at %s) in a %d-token prompt", len(missing), len(needles), strings.Join(missing, ","), tokens)
	}
	return pass(ProbeNeedle, "%d/%d needles returned from a %d-token prompt", len(needles), len(needles), tokens)
}
