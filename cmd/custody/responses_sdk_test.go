package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// TestResponsesGoSDK: the official OpenAI Go SDK's responses.create,
// unchanged, through the real binary, translated to chat and passed
// through: plain, streamed, and a function call with its output sent back.
func TestResponsesGoSDK(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := dialectServe(t)
	c := openai.NewClient(option.WithBaseURL(s.URL+"/v1/"), option.WithAPIKey("sk-acme"), option.WithMaxRetries(0))
	ctx := context.Background()
	weather := responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}, false)
	for _, model := range []string{"translated", "responses"} {
		t.Run(model, func(t *testing.T) {
			var hr *http.Response
			r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: model, Instructions: openai.String("You are a weather bot."),
				Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris today?")},
				MaxOutputTokens: openai.Int(24), Store: openai.Bool(false)}, option.WithResponseInto(&hr))
			if err != nil {
				t.Fatal(err)
			}
			verified(t, "create", hr.Header)
			if !strings.HasPrefix(r.ID, "resp_") || r.Model != "sim-1-0827" || r.OutputText() == "" || r.Usage.InputTokens == 0 ||
				r.Usage.OutputTokens == 0 || (r.Status != responses.ResponseStatusCompleted && r.Status != responses.ResponseStatusIncomplete) {
				t.Errorf("create: id %q model %q status %q text %q usage %+v", r.ID, r.Model, r.Status, r.OutputText(), r.Usage)
			}

			stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris today?")}, MaxOutputTokens: openai.Int(24)})
			var text strings.Builder
			var final responses.Response
			last := int64(-1)
			for stream.Next() {
				ev := stream.Current()
				if ev.SequenceNumber <= last {
					t.Errorf("sequence_number %d after %d", ev.SequenceNumber, last)
				}
				last = ev.SequenceNumber
				switch ev.Type {
				case "response.output_text.delta":
					text.WriteString(ev.Delta)
				case "response.completed", "response.incomplete":
					final = ev.Response
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if text.Len() == 0 || final.OutputText() != text.String() || final.Usage.InputTokens == 0 || !strings.HasPrefix(final.ID, "resp_") {
				t.Errorf("stream: text %q, final %q %q", text.String(), final.ID, final.OutputText())
			}

			// A forced function call, then its output.
			input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("What is the weather in Paris today?", responses.EasyInputMessageRoleUser)}
			call, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: model, MaxOutputTokens: openai.Int(24),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Tools: []responses.ToolUnionParam{weather},
				ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_weather"}}},
				option.WithResponseInto(&hr))
			if err != nil {
				t.Fatal(err)
			}
			verified(t, "function call", hr.Header)
			if len(call.Output) != 1 || call.Output[0].Type != "function_call" {
				t.Fatalf("function call: %s", call.RawJSON())
			}
			fc := call.Output[0].AsFunctionCall()
			var args struct {
				City string `json:"city"`
			}
			if err := json.Unmarshal([]byte(fc.Arguments), &args); err != nil || args.City == "" || fc.Name != "get_weather" || fc.CallID == "" {
				t.Errorf("function call %+v", fc)
			}
			out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"sky":"clear"}`)
			out.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
			input = append(input, responses.ResponseInputItemParamOfFunctionCall(fc.Arguments, fc.CallID, fc.Name), out)
			done, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: model, MaxOutputTokens: openai.Int(24),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Tools: []responses.ToolUnionParam{weather}},
				option.WithResponseInto(&hr))
			if err != nil {
				t.Fatal(err)
			}
			verified(t, "function output", hr.Header)
			if done.OutputText() == "" {
				t.Errorf("after the output: %s", done.RawJSON())
			}
		})
	}
	// A stream that fails after it started raises in the SDK.
	cut := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "cut",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}, MaxOutputTokens: openai.Int(16)})
	for cut.Next() {
	}
	if err := cut.Err(); err == nil || !strings.Contains(err.Error(), "stream_truncated") {
		t.Errorf("a cut stream: %v", err)
	}
	// State custody cannot hold is refused, naming the member.
	_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "translated", PreviousResponseID: openai.String("resp_earlier"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and then?")}})
	var ae *openai.Error
	if !errorsAs(err, &ae) || ae.StatusCode != 400 || ae.Param != "previous_response_id" || ae.Code != "invalid_request" {
		t.Errorf("previous_response_id: %v", err)
	}
}
