package anthropic

import "encoding/json"

// MessageBody is a Messages response (and the message of a stream's
// message_start), as custody writes it.
type MessageBody struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"` // "message"
	Role         string     `json:"role"` // "assistant"
	Model        string     `json:"model"`
	Content      []OutBlock `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        Usage      `json:"usage"`
}

// OutBlock is a content block of a response: thinking, text or
// tool_use.
type OutBlock struct {
	Type string  `json:"type"`
	Text *string `json:"text,omitempty"`
	// Thinking is the engine's reasoning; Signature is "": custody
	// cannot sign it as Anthropic does (and checks none it gets back).
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// Usage is Messages usage. InputTokens excludes the cached prefix: the
// prompt is InputTokens + CacheReadInputTokens + CacheCreationInputTokens
// (Prompt).
type Usage struct {
	InputTokens              int  `json:"input_tokens"`
	OutputTokens             int  `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens,omitempty"`
}

// Prompt is the whole prompt's token count, cached parts included: what
// OpenAI's usage.prompt_tokens counts.
func (u Usage) Prompt() int {
	n := u.InputTokens
	if u.CacheReadInputTokens != nil {
		n += *u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != nil {
		n += *u.CacheCreationInputTokens
	}
	return n
}

// Cached is the prompt tokens read from the cache.
func (u Usage) Cached() int {
	if u.CacheReadInputTokens == nil {
		return 0
	}
	return *u.CacheReadInputTokens
}

// Stop reasons.
const (
	StopEndTurn      = "end_turn"
	StopMaxTokens    = "max_tokens"
	StopSequence     = "stop_sequence"
	StopToolUse      = "tool_use"
	StopPauseTurn    = "pause_turn"
	StopRefusal      = "refusal"
	StopContextLimit = "model_context_window_exceeded"
)

// StopReasonOf is the stop_reason of a chat finish_reason, "" when there
// is none: abort, error and unknown reasons are failures, not stops.
func StopReasonOf(finish string) string {
	switch finish {
	case "stop":
		return StopEndTurn
	case "length":
		return StopMaxTokens
	case "tool_calls", "function_call":
		return StopToolUse
	case "content_filter":
		return StopRefusal
	}
	return ""
}

// MessageID is the Messages id of the chat completion chatID: the same
// upstream answer always has the same id, so that custody's replay check
// sees a replayed chat id as a replayed message id.
func MessageID(chatID string) string { return "msg_" + chatID }
