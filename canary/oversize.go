package canary

import (
	"context"
	"net/http"
)

// probeOversize sends a prompt just over the route's verified capacity
// straight to the upstream (custody would never forward it) and requires
// an honest refusal: a 4xx other than 408 or 429. A 200 means the stack
// silently truncated or replaced the prompt, which is what it will do to
// the first client prompt that slips past a misconfigured capacity.
func (r *Runner) probeOversize(ctx context.Context, t Target) ProbeResult {
	capacity := t.Capacity()
	m, tokens, err := haystack(r.counterFor(t), capacity+r.cfg.OversizeMargin, "Summarise the following text in one sentence.", nil, nil)
	if err != nil || tokens <= capacity {
		return fail(ProbeOversize, "could not build a prompt over capacity %d (got %d tokens)", capacity, tokens)
	}
	res, err := t.Direct(ctx, ChatRequest{Messages: []Message{m}, Temperature: zero(), MaxTokens: 8})
	switch {
	case err != nil:
		return fail(ProbeOversize, "no answer: %s", errText(err))
	case res.Status >= 400 && res.Status < 500 && res.Status != http.StatusRequestTimeout && res.Status != http.StatusTooManyRequests:
		return pass(ProbeOversize, "%d-token prompt over capacity %d refused %d", tokens, capacity, res.Status)
	case res.Status >= 200 && res.Status < 300:
		return fail(ProbeOversize, "%d-token prompt over capacity %d answered %d", tokens, capacity, res.Status)
	}
	return fail(ProbeOversize, "%d-token prompt over capacity %d: status %d", tokens, capacity, res.Status)
}
