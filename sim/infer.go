package sim

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// prompt is one prompt as admission sees it.
type prompt struct {
	words  []string // the toy model's tokens: what prefill writes
	tokens int      // the honest o200k count, as billed
	// placeholderTokens is what usage reports when the prompt is replaced
	// by the one-token placeholder (1, plus framing for chat).
	placeholderTokens int
	// truncate returns the first half of the prompt's words and their
	// billed count (for the truncate fault).
	truncate func() ([]string, int)
	// cache is what the prefix cache held of the prompt (chat only).
	cache cacheUse
}

// result is what the serving stack produced for one prompt.
type result struct {
	tokens       []genToken
	finish       string
	promptTokens int    // what usage reports
	cachedTokens int    // usage.prompt_tokens_details.cached_tokens
	model        string // what `model` reports
	fingerprint  string
	digest       uint64 // of the prompt's own words, picks error-as-200 forms
	release      func() // returns the prompt's pages to the pool
	// call is the tool call the answer is, when the request forced one
	// (tools.go); the tokens are then its arguments' budget.
	call *toolCall
	// misindexed: the plain answer's choice has index 1
	// (FaultChoiceMisindexed).
	misindexed bool
	// reasoning is the reasoning the answer carries as reasoning_content
	// (the request asked for it), one token per word, before its
	// content; counted in the completion tokens.
	reasoning []string
}

// simReasoning is the simulator's reasoning, when asked for it: fixed
// words, which no canary or evaluation code can match, and fewer than
// the contamination scan's shortest run (7 words): an answer's reasoning
// never matches another request's prompt that sent an earlier answer's
// reasoning back.
var simReasoning = []string{"Reading", "the", "request,", "then", "answering."}

// completionTokens is the answer's completion tokens: its reasoning's
// and its content's.
func (r *result) completionTokens() int { return len(r.reasoning) + len(r.tokens) }

var snapshotSuffix = regexp.MustCompile(`-\d{4}$`)

// driftedName is model moved to another snapshot.
func driftedName(model string) string {
	if loc := snapshotSuffix.FindStringIndex(model); loc != nil {
		if model[loc[0]+1:] == "0901" {
			return model[:loc[0]] + "-0902"
		}
		return model[:loc[0]] + "-0901"
	}
	return model + "-0901"
}

// infer runs admission, prefill and decode for one prompt under faults.
// The caller must call result.release once the response is written.
func (s *Server) infer(ctx context.Context, o owner, fs faultSet, model string, p prompt, gp genParams) (*result, error) {
	words, reported := p.words, p.tokens
	staleRead := 0
	switch {
	case fs[FaultPlaceholderSubstitution]:
		// Prefill refuses the prompt as too long and writes a placeholder;
		// decode still expects the original length and its page table runs
		// on into pages the pool has freed.
		staleRead = max(s.pool.pagesFor(len(words))-1, 1)
		words, reported = []string{placeholderWord}, p.placeholderTokens
	case p.tokens > s.cfg.Capacity && !fs[FaultOversize200]:
		return nil, &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "context_length_exceeded", param: "messages",
			msg: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", s.cfg.Capacity, p.tokens)}
	case fs[FaultTruncate]:
		words, reported = p.truncate()
	}
	if len(words) > s.cfg.Capacity {
		words = words[:s.cfg.Capacity]
	}
	// Prefill computes what the prefix cache does not hold: the time to
	// first token is proportional to it.
	spend := sleep
	if s.cfg.Sleep != nil {
		spend = s.cfg.Sleep
	}
	if err := spend(ctx, time.Duration(max(p.tokens-p.cache.warm, 0))*s.cfg.PrefillDelay); err != nil {
		return nil, err
	}
	table, err := s.pool.prefill(o, words)
	if err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	release := func() { s.pool.release(table) }
	read := table
	if fs[FaultStaleKV] {
		staleRead = len(table)
	}
	if staleRead > 0 {
		read = append(append([]pageRef(nil), table...), s.pool.stale(staleRead)...)
	}
	if err := ctx.Err(); err != nil { // the client left: do not decode
		release()
		return nil, err
	}
	ctxWords, err := s.pool.read(make([]string, 0, len(read)*s.cfg.PageTokens), o, read)
	if err != nil {
		release()
		return nil, fmt.Errorf("decode: %w", err)
	}

	res := &result{promptTokens: reported, cachedTokens: p.cache.reported, model: model, digest: digest(p.words), release: release}
	variant := s.cfg.Variant
	switch {
	case fs[FaultSilentFallback]:
		res.model, variant = "sim-fallback-1", 1000+s.cfg.Variant
	case fs[FaultSnapshotDrift]:
		res.model, variant = driftedName(model), s.cfg.Variant+2
	case fs[FaultModelLie]:
		variant = s.cfg.Variant + 1
	}
	res.fingerprint = fingerprint(res.model, variant)
	if fs[FaultModelLie] && !fs[FaultSilentFallback] && !fs[FaultSnapshotDrift] {
		res.fingerprint = fingerprint(model, s.cfg.Variant)
	}
	// The other snapshot also lists the prompt's codes last first: a
	// change of behaviour that one answer shows, for evaluation suites
	// (an `equals` or `regex` on the codes in order) to catch.
	gp.codesLastFirst = fs[FaultSnapshotDrift] || fs[FaultModelLie]
	res.tokens, res.finish = generate(ctxWords, variant, gp)
	return res, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// content is the text of tokens.
func content(toks []genToken) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
	}
	return b.String()
}

// words splits text into the toy model's tokens.
func words(text string) []string { return strings.Fields(text) }

// genParamsOf resolves sampling parameters.
func genParamsOf(maxTokens *int, temperature *float64, seed *int64, topLogprobs int, unseeded func() uint64) genParams {
	gp := genParams{maxTokens: defaultMaxTokens, seed: seed, topLogprobs: topLogprobs}
	if maxTokens != nil {
		gp.maxTokens = *maxTokens
	}
	if temperature != nil {
		gp.temperature = *temperature
	}
	if gp.temperature > 0 && seed == nil {
		gp.noSeed = unseeded()
	}
	return gp
}

// shapeError200 rewrites choices for an error-as-200 form (other than the
// error body, which replaces the whole response).
func shapeError200(form Fault, toks []genToken, finish string) ([]genToken, string) {
	switch form {
	case FaultErrorAs200Abort:
		return toks[:len(toks)/2], "abort"
	case FaultErrorAs200EmptyLength:
		return nil, "length"
	}
	return toks, finish
}

// errorAs200Body is the body of the error-body form.
func errorAs200Body() []byte {
	return []byte(`{"error":{"message":"prefill rejected the request: prompt too long","type":"server_error","param":null,"code":"internal_error"}}`)
}
