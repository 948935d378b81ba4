package responses

import (
	"encoding/json"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

// usageOf is the chat completion's usage as Responses counts it (nil
// without one). reasoning_tokens is the upstream's own count
// (completion_tokens_details.reasoning_tokens); an upstream that reports
// none (llama.cpp) gets 0 there, as its chat usage says nothing more:
// custody counts no reasoning tokens of its own.
func usageOf(cu *openai.Usage) *Usage {
	if cu == nil {
		return nil
	}
	u := &Usage{InputTokens: cu.PromptTokens, OutputTokens: cu.CompletionTokens,
		TotalTokens: cu.PromptTokens + cu.CompletionTokens}
	if d := cu.PromptTokensDetails; d != nil {
		u.InputTokensDetails.CachedTokens = d.CachedTokens
	}
	if d := cu.CompletionTokensDetails; d != nil {
		u.OutputTokensDetails.ReasoningTokens = d.ReasoningTokens
	}
	return u
}

func notTranslatable(format string, args ...any) error {
	return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's chat completion cannot be translated: "+format, args...)
}

// FromChat translates a chat completion (already accepted by custody's
// chat checks) to the Response of r: a message item with the text, a
// function_call item per tool call, status completed, or incomplete for
// a length or content_filter finish, usage as Responses counts it.
//
// It reads body as custody's chat checks read it (openai.ParseResponse:
// exact member names, no duplicates), never with encoding/json's
// case-insensitive matching.
func (r *Request) FromChat(body []byte, createdAt int64) ([]byte, error) {
	c, err := openai.ParseResponse(body)
	if err != nil {
		return nil, notTranslatable("not a chat completion")
	}
	return r.FromChatResponse(c, createdAt)
}

// FromChatResponse is FromChat of the chat completion the checks decoded.
func (r *Request) FromChatResponse(c *openai.Response, createdAt int64) ([]byte, error) {
	ch, why := openai.OneAnswer(c)
	if why != "" {
		return nil, notTranslatable("%s", why)
	}
	status, details := statusOf(ch.FinishReason)
	if status == "" {
		return nil, notTranslatable("finish_reason %q", ch.FinishReason)
	}
	o := r.object(ResponseID(c.ID), c.Model, createdAt)
	o.Status, o.IncompleteDetails, o.Usage = status, details, usageOf(c.Usage)
	if t := reasoningOf(&ch.Message); t != "" {
		o.Output = append(o.Output, reasoningItem(c.ID, t, StatusCompleted))
	}
	if t := ch.Message.Content; t != "" {
		o.Output = append(o.Output, messageItem(c.ID, t, StatusCompleted))
	}
	for _, tc := range ch.Message.ToolCalls {
		args := tc.Function.Arguments
		o.Output = append(o.Output, OutputItem{Type: "function_call", ID: "fc_" + tc.ID, Status: StatusCompleted,
			CallID: tc.ID, Name: tc.Function.Name, Arguments: &args})
	}
	return json.Marshal(o)
}

func messageItem(chatID, text, status string) OutputItem {
	return OutputItem{Type: "message", ID: "msg_" + chatID, Status: status, Role: "assistant",
		Content: []OutputText{{Type: "output_text", Text: text, Annotations: []string{}}}}
}

// reasoningItem is the reasoning item of the engine's reasoning text.
func reasoningItem(chatID, text, status string) OutputItem {
	return OutputItem{Type: "reasoning", ID: "rs_" + chatID, Status: status, Summary: &[]OutputText{},
		Content: []OutputText{{Type: "reasoning_text", Text: text}}}
}

// reasoningOf is the reasoning text of a chat message or delta: its
// reasoning_content (vLLM, llama.cpp, DeepSeek), else its reasoning
// (OpenRouter, newer vLLM, which may send both with the same text).
func reasoningOf(c *openai.Content) string {
	if c.ReasoningContent != "" {
		return c.ReasoningContent
	}
	return c.Reasoning
}
