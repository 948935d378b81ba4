package openai

import (
	"encoding/json"
	"fmt"
)

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
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// ChatOut is a choice's message or delta.
type ChatOut struct {
	Content   *string    `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

// ReadChatAnswer reads a plain chat completion as the translating fronts
// take it: JSON, no error body, exactly one choice with a message. finish
// is that choice's finish_reason ("" when null); why, when not "", says
// what body is instead, and c is nil.
func ReadChatAnswer(body []byte) (c *ChatCompletion, finish, why string) {
	c = new(ChatCompletion)
	if err := json.Unmarshal(body, c); err != nil {
		return nil, "", "not a chat completion"
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return nil, "", "an error body"
	}
	if len(c.Choices) != 1 || c.Choices[0].Message == nil {
		return nil, "", fmt.Sprintf("%d choices", len(c.Choices))
	}
	if f := c.Choices[0].FinishReason; f != nil {
		finish = *f
	}
	return c, finish, ""
}
