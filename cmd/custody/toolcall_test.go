package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// TestToolCallRoundTrip drives a tool-call round trip with the OpenAI Go
// SDK through the real binary on its embedded defaults: the simulator
// renders the request with its chat template (tools in the system turn,
// the assistant's call, the tool's result) and custody counts the same
// rendering, so the answer is verified.
func TestToolCallRoundTrip(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir)
	cfg := openai.DefaultConfig("unused-on-loopback")
	cfg.BaseURL = s.URL + "/v1"
	c := openai.NewClientWithConfig(cfg)
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "get_weather", Description: "Current weather for a city.",
		Parameters: jsonschema.Definition{Type: jsonschema.Object, Required: []string{"city"},
			Properties: map[string]jsonschema.Definition{"city": {Type: jsonschema.String}, "days": {Type: jsonschema.Integer}}},
	}}}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are a weather bot."},
		{Role: openai.ChatMessageRoleUser, Content: "Weather in Paris?", Name: "alice"},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris", "days": 2}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: `{"sky":"clear","high_c":21.5}`},
	}
	for _, stream := range []bool{false, true} {
		req := openai.ChatCompletionRequest{Model: "sim-1", Messages: msgs, Tools: tools, ToolChoice: "auto"}
		if !stream {
			r, err := c.CreateChatCompletion(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if v := r.Header().Get("Custody-Verdict"); v != "verified" {
				t.Errorf("verdict %q, checks %q", v, r.Header().Get("Custody-Checks"))
			}
			continue
		}
		req.Stream = true
		st, err := c.CreateChatCompletionStream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for {
			chunk, err := st.Recv()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("stream: %v", err)
				}
				break
			}
			for _, ch := range chunk.Choices {
				text.WriteString(ch.Delta.Content)
			}
		}
		st.Close()
		if text.Len() == 0 {
			t.Error("the stream carried no text")
		}
	}
	// Tools offered, none called yet.
	_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "sim-1",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}, Tools: tools})
	if err != nil {
		t.Errorf("tools without calls: %v", err)
	}
}
