package sim

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

// chat serves POST /v1/chat/completions.
func (s *Server) chat(c *call) error {
	req, res, err := s.chatInfer(c, c.body)
	if err != nil {
		return err
	}
	defer res.release()
	form := c.faults.errorAs200Form(res.digest)
	res.tokens, res.finish = shapeError200(form, res.tokens, res.finish)
	if form != "" {
		res.reasoning = nil // an error's shape is the answer's alone
	}
	head, u := s.chatHead(c, req, res)
	if req.Stream {
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		events := chatStreamEvents(head, res, req.Logprobs, includeUsage, form, u.PromptTokensDetails)
		return s.writeStream(c, "chat-stream", head, events)
	}
	if err := sleep(c.r.Context(), time.Duration(len(res.tokens))*s.cfg.TokenDelay); err != nil {
		return err
	}
	body, err := chatCompletionBody(head, u, res, req.Logprobs, form)
	if err != nil {
		return err
	}
	writeBody(c.w, s.swapBody("chat", body, c.faults[FaultResponseSwap]))
	return nil
}

// chatInfer parses a chat request body and runs it through the serving
// stack: the template rendering and count, the prefix cache, prefill and
// decode. The caller must release the result.
func (s *Server) chatInfer(c *call, body []byte) (*chatRequest, *result, error) {
	req, msgs, err := parseChat(body)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkModel(req.Model); err != nil {
		return nil, nil, err
	}
	var all []string
	for _, m := range msgs {
		all = append(all, words(m.Content)...)
	}
	// The prompt is what the chat template renders, counted as llama.cpp
	// counts it; a refusal of the template's is the engine's 400.
	rendered, err := s.tmpl.Render(template.EngineLlamaCpp, body)
	if err != nil {
		return nil, nil, badRequest("%s", err)
	}
	tokens := s.counter.Count(rendered.Text)
	var cache cacheUse
	caching := req.CachePrompt == nil || *req.CachePrompt
	if caching && tokens <= s.cfg.Capacity {
		salt := ""
		if req.CacheSalt != nil {
			salt = *req.CacheSalt
		}
		cache = s.cache.use(c.faults, salt, rendered.Text, words(rendered.Text), s.counter.Count)
	}
	p := prompt{
		cache:             cache,
		words:             all,
		tokens:            tokens,
		placeholderTokens: s.chatPlaceholder,
		truncate: func() ([]string, int) {
			// Keep the first half of the words; the rest of the prompt
			// is gone from the count.
			tm := truncateMessages(msgs, len(all)/2)
			var kept, dropped []string
			for i, m := range tm {
				w := words(m.Content)
				kept = append(kept, w...)
				dropped = append(dropped, words(msgs[i].Content)[len(w):]...)
			}
			return kept, tokens - s.counter.Count(strings.Join(dropped, " "))
		},
	}
	maxTokens := req.MaxTokens
	if req.MaxCompletionTokens != nil {
		maxTokens = req.MaxCompletionTokens
	}
	top := 0
	if req.TopLogprobs != nil {
		top = *req.TopLogprobs
	}
	gp := genParamsOf(maxTokens, req.Temperature, req.Seed, top, func() uint64 { return s.unseeded(c.body) })
	// Reasoning comes first and counts against max_tokens, as on the
	// engines: the content has what it leaves.
	thinks := req.thinks() && gp.maxTokens > len(simReasoning)
	if thinks {
		gp.maxTokens -= len(simReasoning)
	}
	res, err := s.infer(c.r.Context(), c.owner, c.faults, req.Model, p, gp)
	if err != nil {
		return nil, nil, err
	}
	res.call = toolCallOf(req, res)
	honourContract(c.faults, req, res, maxTokens)
	if thinks {
		res.reasoning = simReasoning
	}
	return req, res, nil
}

// chatHead is the envelope of a chat answer (a fresh id, or under
// duplicate-id the previous one) and its usage.
func (s *Server) chatHead(c *call, req *chatRequest, res *result) (envelope, *usage) {
	head := envelope{
		ID:                s.responseID("chat", "chatcmpl-", c.faults[FaultDuplicateID]),
		Created:           time.Now().Unix(),
		Model:             res.model,
		SystemFingerprint: res.fingerprint,
	}
	n := res.completionTokens()
	u := &usage{PromptTokens: res.promptTokens, CompletionTokens: n, TotalTokens: res.promptTokens + n}
	if req.CacheSalt != nil || res.cachedTokens > 0 {
		u.PromptTokensDetails = &promptTokensDetails{CachedTokens: res.cachedTokens}
	}
	return head, u
}

// chatCompletionBody is a chat completion's body, or the error-as-200 form's.
func chatCompletionBody(head envelope, u *usage, res *result, logprobs bool, form Fault) ([]byte, error) {
	if form == FaultErrorAs200Body {
		return errorAs200Body(), nil
	}
	head.Object = "chat.completion"
	head.Usage = u
	choice := chatChoice{
		Message:      &chatOutMessage{Role: "assistant", Content: content(res.tokens), ReasoningContent: strings.Join(res.reasoning, " ")},
		FinishReason: strPtr(res.finish),
	}
	if res.call != nil {
		choice.Message.Content = ""
		choice.Message.ToolCalls = []wireToolCall{res.call.wire(true)}
	}
	if logprobs {
		choice.Logprobs = chatLogprobsOf(res.tokens)
	}
	head.Choices = []chatChoice{choice}
	if res.misindexed {
		choice.Index = 1
		head.Choices = []chatChoice{choice}
	}
	if form == FaultErrorAs200Empty {
		head.Choices = []chatChoice{}
	}
	return json.Marshal(head)
}

// truncateMessages keeps the first keep words of msgs, in order; messages
// past the cut keep their role and lose their content.
func truncateMessages(msgs []tokenize.Message, keep int) []tokenize.Message {
	out := make([]tokenize.Message, len(msgs))
	for i, m := range msgs {
		w := words(m.Content)
		n := min(len(w), keep)
		keep -= n
		m.Content = strings.Join(w[:n], " ")
		out[i] = m
	}
	return out
}

// chatStreamEvents renders a chat completion as SSE events: a role chunk,
// one chunk per token, a finish chunk, and (includeUsage) a usage chunk
// with empty choices, as OpenAI does.
func chatStreamEvents(head envelope, res *result, logprobs, includeUsage bool, form Fault, details *promptTokensDetails) [][]byte {
	head.Object = "chat.completion.chunk"
	if form == FaultErrorAs200Body {
		return [][]byte{errorAs200Body()}
	}
	var chunks []any
	choice := func(ch chatChoice) any {
		if form == FaultErrorAs200Empty {
			return []chatChoice{}
		}
		return []chatChoice{ch}
	}
	empty := ""
	chunks = append(chunks, choice(chatChoice{Delta: &chatDelta{Role: "assistant", Content: &empty}}))
	for i, w := range res.reasoning {
		if i > 0 {
			w = " " + w
		}
		chunks = append(chunks, choice(chatChoice{Delta: &chatDelta{ReasoningContent: w}}))
	}
	for _, t := range res.tokens {
		if res.call != nil {
			// A call's arguments come in two pieces after its head.
			head, args := res.call.wire(false), res.call.Arguments
			head.Function.Arguments = args[:len(args)/2]
			chunks = append(chunks, choice(chatChoice{Delta: &chatDelta{ToolCalls: []wireToolCall{head}}}))
			tail := wireToolCall{Index: 0, Function: wireFunction{Arguments: args[len(args)/2:]}}
			chunks = append(chunks, choice(chatChoice{Delta: &chatDelta{ToolCalls: []wireToolCall{tail}}}))
			break
		}
		text := t.text
		ch := chatChoice{Delta: &chatDelta{Content: &text}}
		if logprobs {
			ch.Logprobs = chatLogprobsOf([]genToken{t})
		}
		chunks = append(chunks, choice(ch))
	}
	chunks = append(chunks, choice(chatChoice{Delta: &chatDelta{}, FinishReason: strPtr(res.finish)}))
	events := make([][]byte, 0, len(chunks)+1)
	for _, ch := range chunks {
		h := head
		h.Choices = ch
		b, _ := json.Marshal(h)
		events = append(events, b)
	}
	if includeUsage {
		h := head
		h.Choices = []chatChoice{}
		n := res.completionTokens()
		h.Usage = &usage{PromptTokens: res.promptTokens, CompletionTokens: n, TotalTokens: res.promptTokens + n, PromptTokensDetails: details}
		b, _ := json.Marshal(h)
		events = append(events, b)
	}
	return events
}
