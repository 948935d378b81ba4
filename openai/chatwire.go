package openai

import "fmt"

// OneAnswer is the one choice of a plain chat completion as the
// translating fronts (anthropic, responses) take it, read from custody's
// own strict parse (ParseResponse) so that the translation says what the
// checks read: no error body, exactly one choice, a finish_reason that
// agrees with the message (tool_calls only with calls). why, when not
// "", says what the body is instead.
func OneAnswer(c *Response) (ch *Choice, why string) {
	if c.Error != nil {
		return nil, "an error body"
	}
	if len(c.Choices) != 1 {
		return nil, fmt.Sprintf("%d choices", len(c.Choices))
	}
	ch = &c.Choices[0]
	if (ch.FinishReason == "tool_calls" || ch.FinishReason == "function_call") && len(ch.Message.ToolCalls) == 0 {
		return nil, "finish_reason " + ch.FinishReason + " without a tool call"
	}
	return ch, ""
}
