package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

// usageOf is the chat completion's usage as Messages counts it.
func usageOf(cu *openai.Usage) Usage {
	if cu == nil {
		return Usage{}
	}
	u := Usage{InputTokens: cu.PromptTokens, OutputTokens: cu.CompletionTokens}
	if d := cu.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		cached := min(d.CachedTokens, cu.PromptTokens)
		u.InputTokens -= cached
		u.CacheReadInputTokens = &cached
	}
	return u
}

// notTranslatable is an upstream answer that has no Messages form.
func notTranslatable(format string, args ...any) error {
	return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's chat completion cannot be translated: "+format, args...)
}

// FromChat translates a chat completion (which custody's chat checks
// have already accepted) to a Messages response: the text and each tool
// call (arguments parsed into input) as content blocks in order, the
// stop_reason of its finish_reason, usage with the cached prefix moved
// out of input_tokens into cache_read_input_tokens.
//
// It reads body as custody's chat checks read it (openai.ParseResponse:
// exact member names, no duplicates), never with encoding/json's
// case-insensitive matching: a "Name" beside "name" cannot be one tool to
// the checks and another to the client.
func FromChat(body []byte) ([]byte, error) {
	c, err := openai.ParseResponse(body)
	if err != nil {
		return nil, notTranslatable("not a chat completion")
	}
	return FromChatResponse(c)
}

// FromChatResponse is FromChat of the chat completion the checks decoded.
func FromChatResponse(c *openai.Response) ([]byte, error) { return fromChat(c, false) }

// FromChat is the package's FromChat as r asked for the answer: with
// thinking.display omitted, the thinking block comes back with an empty
// thinking (and, as always, an empty signature), as Anthropic answers
// it. The reasoning is still the engine's, read and scanned by custody's
// chat checks; only the client is not sent it.
func (r *Request) FromChat(body []byte) ([]byte, error) {
	c, err := openai.ParseResponse(body)
	if err != nil {
		return nil, notTranslatable("not a chat completion")
	}
	return r.FromChatResponse(c)
}

// FromChatResponse is r.FromChat of the chat completion the checks
// decoded.
func (r *Request) FromChatResponse(c *openai.Response) ([]byte, error) {
	return fromChat(c, r.OmitsThinking())
}

// NewStreamTranslator is a StreamTranslator as r asked for the answer:
// with thinking.display omitted, a thinking block opens and closes
// without thinking_delta events.
func (r *Request) NewStreamTranslator() *StreamTranslator {
	return &StreamTranslator{omitThinking: r.OmitsThinking()}
}

// OmitsThinking reports whether r asks for thinking blocks without their
// text (thinking.display: omitted).
func (r *Request) OmitsThinking() bool {
	ctl, _ := r.translateControls()
	return ctl.omitThinking
}

// fromChat is FromChatResponse; omit leaves the thinking block's text
// out.
func fromChat(c *openai.Response, omit bool) ([]byte, error) {
	ch, why := openai.OneAnswer(c)
	if why != "" {
		return nil, notTranslatable("%s", why)
	}
	stop := StopReasonOf(ch.FinishReason)
	if stop == "" {
		return nil, notTranslatable("finish_reason %q", ch.FinishReason)
	}
	m := MessageBody{ID: MessageID(c.ID), Type: "message", Role: "assistant", Model: c.Model,
		Content: []OutBlock{}, StopReason: &stop, Usage: usageOf(c.Usage)}
	if r := reasoningOf(&ch.Message); r != "" {
		if omit {
			r = ""
		}
		m.Content = append(m.Content, thinkingBlock(r))
	}
	if t := ch.Message.Content; t != "" {
		m.Content = append(m.Content, OutBlock{Type: "text", Text: &t})
	}
	for i, tc := range ch.Message.ToolCalls {
		input, err := toolInput(tc.Function.Arguments)
		if err != nil {
			return nil, notTranslatable("tool call %d: %s", i, err)
		}
		m.Content = append(m.Content, OutBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	return json.Marshal(m)
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

// thinkingBlock is a thinking block of text, with an empty signature.
func thinkingBlock(text string) OutBlock {
	sig := ""
	return OutBlock{Type: "thinking", Thinking: &text, Signature: &sig}
}

// toolInput parses a tool call's arguments: a JSON object ("" is {}).
func toolInput(args string) (json.RawMessage, error) {
	if args == "" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("arguments are not a JSON object")
	}
	return compact(json.RawMessage(args)), nil
}
