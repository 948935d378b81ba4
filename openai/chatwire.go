package openai

import "encoding/json"

// ChatCompletion is a chat completion, or one of its stream chunks, as
// the translators to other dialects (anthropic, responses) read it:
// content and finish_reason nullable, tool calls with their arguments,
// the upstream's error.
type ChatCompletion struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int      `json:"index"`
		FinishReason *string  `json:"finish_reason"`
		Message      *ChatOut `json:"message"`
		Delta        *ChatOut `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// ChatOut is a choice's message or delta.
type ChatOut struct {
	Content   *string `json:"content"`
	ToolCalls []struct {
		Index    int    `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}
