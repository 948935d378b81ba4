package canary

import "context"

// probeEcho asks the route to repeat a fresh nonce. It fails when the nonce
// does not come back, and also when anything else id-like comes back with
// it: another nonce-like word is another request's id leaking into this
// answer (stale KV, a swapped response), and a live canary secret is the
// secret probe's request leaking. Foreign words are counted, never shown:
// they are another request's prompt.
func (r *Runner) probeEcho(ctx context.Context, t Target) ProbeResult {
	n := nonce(10)
	a, f := ask(ctx, t, ProbeEcho, ChatRequest{
		Messages:    []Message{{Role: "user", Content: "Repeat this code exactly and nothing else: " + n}},
		Temperature: zero(),
		MaxTokens:   16,
	})
	if f != nil {
		return *f
	}
	if label, ok := r.secrets.find(a.Text); ok {
		return fail(ProbeEcho, "answer carries live canary secret %s", label)
	}
	own, others := false, map[string]bool{}
	for _, w := range nonceLike(a.Text) {
		if w == n {
			own = true
		} else {
			others[w] = true
		}
	}
	foreign := len(others)
	switch {
	case !own:
		return fail(ProbeEcho, "nonce %s missing (%d foreign ids)", n, foreign)
	case foreign > 0:
		return fail(ProbeEcho, "nonce %s returned with %d foreign ids", n, foreign)
	}
	return pass(ProbeEcho, "nonce %s returned", n)
}
