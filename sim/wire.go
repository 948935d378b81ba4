package sim

import (
	"encoding/json"
)

// The response shapes, as OpenAI writes them.

type usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// promptTokensDetails is written for chat requests that carry a
// cache_salt or hit the prefix cache (the others keep the usage they
// always had).
type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type chatOutMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type chatDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type logprobAlt struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type logprobToken struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []logprobAlt `json:"top_logprobs"`
}

type chatLogprobs struct {
	Content []logprobToken `json:"content"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      *chatOutMessage `json:"message,omitempty"`
	Delta        *chatDelta      `json:"delta,omitempty"`
	Logprobs     *chatLogprobs   `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	Text         string          `json:"text"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// envelope is the common head of every completion-like response and chunk.
type envelope struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           any    `json:"choices"`
	Usage             *usage `json:"usage,omitempty"`
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelInfo `json:"data"`
}

type modelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// MaxModelLen is the context the simulator holds, named as vLLM
	// names it.
	MaxModelLen int `json:"max_model_len"`
}

type embeddingList struct {
	Object string          `json:"object"`
	Data   []embeddingItem `json:"data"`
	Model  string          `json:"model"`
	Usage  embeddingUsage  `json:"usage"`
}

type embeddingItem struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

type embeddingUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

func strPtr(s string) *string { return &s }

func tokenBytes(s string) []int {
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return b
}

func chatLogprobsOf(toks []genToken) *chatLogprobs {
	lp := &chatLogprobs{Content: make([]logprobToken, len(toks))}
	for i, t := range toks {
		top := make([]logprobAlt, len(t.top))
		for j, a := range t.top {
			top[j] = logprobAlt{Token: a.text, Logprob: a.logprob, Bytes: tokenBytes(a.text)}
		}
		lp.Content[i] = logprobToken{Token: t.text, Logprob: t.logprob, Bytes: tokenBytes(t.text), TopLogprobs: top}
	}
	return lp
}
