package sim

import (
	"encoding/json"
	"strings"
	"time"
)

// completions serves POST /v1/completions: one choice per prompt.
func (s *Server) completions(c *call) error {
	req, prompts, err := parseCompletion(c.body)
	if err != nil {
		return err
	}
	if err := s.checkModel(req.Model); err != nil {
		return err
	}
	gp := genParamsOf(req.MaxTokens, req.Temperature, req.Seed, 0, func() uint64 { return s.unseeded(c.body) })
	results := make([]*result, 0, len(prompts))
	defer func() {
		for _, r := range results {
			r.release()
		}
	}()
	for _, text := range prompts {
		all := words(text)
		p := prompt{
			words:             all,
			tokens:            s.counter.Count(text),
			placeholderTokens: 1,
			truncate: func() ([]string, int) {
				kept := all[:len(all)/2]
				return kept, s.counter.Count(strings.Join(kept, " "))
			},
		}
		res, err := s.infer(c.r.Context(), c.owner, c.faults, req.Model, p, gp)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	form := c.faults.errorAs200Form(results[0].digest)
	var u usage
	for _, r := range results {
		r.tokens, r.finish = shapeError200(form, r.tokens, r.finish)
		u.PromptTokens += r.promptTokens
		u.CompletionTokens += len(r.tokens)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	head := envelope{
		ID:                s.responseID("completions", "cmpl-", c.faults[FaultDuplicateID]),
		Object:            "text_completion",
		Created:           time.Now().Unix(),
		Model:             results[0].model,
		SystemFingerprint: results[0].fingerprint,
	}
	if req.Stream {
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		return s.writeStream(c, "completions-stream", head, completionStreamEvents(head, results, u, includeUsage, form))
	}
	if err := sleep(c.r.Context(), time.Duration(u.CompletionTokens)*s.cfg.TokenDelay); err != nil {
		return err
	}
	var body []byte
	if form == FaultErrorAs200Body {
		body = errorAs200Body()
	} else {
		choices := []completionChoice{}
		if form != FaultErrorAs200Empty {
			for i, r := range results {
				choices = append(choices, completionChoice{Index: i, Text: content(r.tokens), Logprobs: json.RawMessage("null"), FinishReason: strPtr(r.finish)})
			}
		}
		head.Choices = choices
		head.Usage = &u
		if body, err = json.Marshal(head); err != nil {
			return err
		}
	}
	writeBody(c.w, s.swapBody("completions", body, c.faults[FaultResponseSwap]))
	return nil
}

// completionStreamEvents renders completions as SSE chunks: per prompt,
// one chunk per token then a finish chunk; then the usage chunk.
func completionStreamEvents(head envelope, results []*result, u usage, includeUsage bool, form Fault) [][]byte {
	if form == FaultErrorAs200Body {
		return [][]byte{errorAs200Body()}
	}
	var events [][]byte
	emit := func(ch completionChoice) {
		h := head
		h.Choices = []completionChoice{ch}
		if form == FaultErrorAs200Empty {
			h.Choices = []completionChoice{}
		}
		b, _ := json.Marshal(h)
		events = append(events, b)
	}
	null := json.RawMessage("null")
	for i, r := range results {
		for _, t := range r.tokens {
			emit(completionChoice{Index: i, Text: t.text, Logprobs: null})
		}
		emit(completionChoice{Index: i, Logprobs: null, FinishReason: strPtr(r.finish)})
	}
	if includeUsage {
		h := head
		h.Choices = []completionChoice{}
		h.Usage = &u
		b, _ := json.Marshal(h)
		events = append(events, b)
	}
	return events
}
