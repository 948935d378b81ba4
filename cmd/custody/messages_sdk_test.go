package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// dialectServe runs `custody serve` with, besides the chat models, a
// model per path a Messages or Responses client can take:
//
//	translated  kind sim: Messages and Responses translated to chat
//	messages    kind anthropic (a `custody sim` process, rendering as
//	            llama.cpp): passed through
//	claude      the same upstream with the engine unknown, as a Claude
//	            model is to custody: passed through, prompt not counted
//	fallback    a provider that refuses connections, then kind sim
//	cut, liar   simulators whose streams end early / that serve another model
//	responses   kind sim with responses: true: passed through
func dialectServe(t *testing.T) *server {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: sim, kind: sim, request_id_echo: x-request-id}
  - {name: direct, kind: sim, responses: true, request_id_echo: x-request-id}
  - {name: vllm-messages, kind: anthropic, engine: llamacpp, base_url: %[1]q, request_id_echo: x-request-id}
  - {name: claude, kind: anthropic, base_url: %[1]q}
  - {name: broken, kind: openai, base_url: "http://127.0.0.1:1/v1", timeout: 2s}
  - {name: cut, kind: sim, responses: true, sim: {faults: [stream-cut]}}
  - {name: liar, kind: sim, sim: {faults: [silent-fallback]}}
models:
  - {name: translated, context_window: 32768, routes: [{provider: sim, model: sim-1-0827}]}
  - {name: responses, context_window: 32768, routes: [{provider: direct, model: sim-1-0827}]}
  - {name: messages, context_window: 32768, routes: [{provider: vllm-messages, model: sim-1-0827}]}
  - {name: claude, context_window: 32768, routes: [{provider: claude, model: sim-1-0827}]}
  - {name: cut, context_window: 32768, routes: [{provider: cut, model: sim-1-0827}]}
  - {name: liar, context_window: 32768, routes: [{provider: liar, model: sim-1-0827}]}
  - {name: fallback, context_window: 32768, routes: [{provider: broken, model: sim-1-0827}, {provider: sim, model: sim-1-0827}]}
`, startSimProcess(t))
	return startServe(t, dir, "--config", writeConfig(t, dir, cfg))
}

func verified(t *testing.T, what string, h http.Header) {
	t.Helper()
	if v := h.Get("Custody-Verdict"); v != "verified" {
		t.Errorf("%s: Custody-Verdict %q, checks %q", what, v, h.Get("Custody-Checks"))
	}
	for _, name := range []string{"Custody-Request-Id", "Custody-Model", "Custody-Provider", "Custody-Receipt", "Custody-Fallback"} {
		if h.Get(name) == "" {
			t.Errorf("%s: no %s", what, name)
		}
	}
}

// TestMessagesGoSDK: the official Anthropic Go SDK, unchanged, through
// the real binary, translated to chat and passed through: create, stream,
// a tool call and its tool_result round trip, count_tokens.
func TestMessagesGoSDK(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := dialectServe(t)
	c := anthropic.NewClient(option.WithBaseURL(s.URL), option.WithAPIKey("sk-acme"), option.WithMaxRetries(0))
	ctx := context.Background()
	weather := anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
		Properties: map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
		Required:   []string{"city"}}, "get_weather")
	for _, model := range []string{"translated", "messages"} {
		t.Run(model, func(t *testing.T) {
			ask := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris today?"))}
			var hr *http.Response
			msg, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 24, Messages: ask,
				System: []anthropic.TextBlockParam{{Text: "You are a weather bot."}}}, option.WithResponseInto(&hr))
			if err != nil {
				t.Fatal(err)
			}
			verified(t, "create", hr.Header)
			if !strings.HasPrefix(msg.ID, "msg_") || msg.Model != "sim-1-0827" || len(msg.Content) == 0 || msg.Content[0].Text == "" ||
				msg.Usage.InputTokens == 0 || msg.Usage.OutputTokens == 0 || msg.StopReason == "" {
				t.Errorf("create: %+v", msg)
			}

			count, err := c.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: model, Messages: ask,
				System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: []anthropic.TextBlockParam{{Text: "You are a weather bot."}}}})
			if err != nil {
				t.Fatal(err)
			}
			if count.InputTokens != msg.Usage.InputTokens {
				t.Errorf("count_tokens %d, the answer's input_tokens %d", count.InputTokens, msg.Usage.InputTokens)
			}

			stream := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 24, Messages: ask})
			var acc anthropic.Message
			var text strings.Builder
			for stream.Next() {
				ev := stream.Current()
				if err := acc.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
				if d, ok := ev.AsAny().(anthropic.ContentBlockDeltaEvent); ok {
					text.WriteString(d.Delta.Text)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if text.Len() == 0 || acc.StopReason == "" || acc.Usage.OutputTokens == 0 || !strings.HasPrefix(acc.ID, "msg_") {
				t.Errorf("stream: text %q, message %+v", text.String(), acc)
			}

			// A forced tool call, then its result, streamed and not.
			call, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 24, Messages: ask,
				Tools: []anthropic.ToolUnionParam{weather}, ToolChoice: anthropic.ToolChoiceParamOfTool("get_weather")}, option.WithResponseInto(&hr))
			if err != nil {
				t.Fatal(err)
			}
			verified(t, "tool call", hr.Header)
			if call.StopReason != anthropic.StopReasonToolUse || len(call.Content) != 1 || call.Content[0].Type != "tool_use" {
				t.Fatalf("tool call: %+v", call)
			}
			use := call.Content[0].AsToolUse()
			var input struct {
				City string `json:"city"`
				Days int    `json:"days"`
			}
			if err := json.Unmarshal(use.Input, &input); err != nil || input.City == "" || use.Name != "get_weather" {
				t.Errorf("tool_use %s %s", use.Name, use.Input)
			}
			turns := append(ask, call.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, `{"sky":"clear","high_c":21}`, false)))
			done, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 24, Messages: turns,
				Tools: []anthropic.ToolUnionParam{weather}}, option.WithResponseInto(&hr))
			if err != nil {
				t.Fatal(err)
			}
			verified(t, "tool result", hr.Header)
			if len(done.Content) == 0 || done.Content[0].Type != "text" {
				t.Errorf("after the tool result: %+v", done)
			}
			ts := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 24, Messages: ask,
				Tools: []anthropic.ToolUnionParam{weather}, ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}})
			var tacc anthropic.Message
			for ts.Next() {
				if err := tacc.Accumulate(ts.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := ts.Err(); err != nil {
				t.Fatal(err)
			}
			if len(tacc.Content) != 1 || tacc.Content[0].Type != "tool_use" || !json.Valid(tacc.Content[0].Input) ||
				!strings.Contains(string(tacc.Content[0].Input), `"city"`) {
				t.Errorf("streamed tool call: %+v", tacc.Content)
			}
		})
	}
	// A prompt custody cannot count is said to be so, and the verdict
	// stays verified: no band is guessed.
	var hr *http.Response
	if _, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude", MaxTokens: 8,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}, option.WithResponseInto(&hr)); err != nil {
		t.Fatal(err)
	}
	if h := hr.Header; h.Get("Custody-Verdict") != "verified" || !strings.Contains(h.Get("Custody-Checks"), "prompt_tokens=skipped") {
		t.Errorf("claude: verdict %q checks %q", h.Get("Custody-Verdict"), h.Get("Custody-Checks"))
	}
	// A stream that fails after it started raises in the SDK: custody
	// ends it with an error event, never message_stop.
	cut := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "cut", MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	for cut.Next() {
	}
	if err := cut.Err(); err == nil || !strings.Contains(err.Error(), "stream_truncated") {
		t.Errorf("a cut stream: %v", err)
	}
	_, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: "liar", MaxTokens: 8,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var lie *anthropic.Error
	if !errorsAs(err, &lie) || lie.StatusCode != 502 || !strings.Contains(lie.Error(), "model_mismatch") {
		t.Errorf("a substituted model: %v", err)
	}
	// An error reaches the SDK as Anthropic's error, custody's code inside.
	_, err = c.Messages.New(ctx, anthropic.MessageNewParams{Model: "no-such-model", MaxTokens: 8,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var ae *anthropic.Error
	if !errorsAs(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Error(), "invalid_request") {
		t.Errorf("unknown model: %v", err)
	}
}
