package responses

import (
	"encoding/json"
	"testing"
)

// TestReasoningTokens: usage.output_tokens_details.reasoning_tokens is
// the chat upstream's completion_tokens_details.reasoning_tokens, in the
// Response and in a stream's response.completed; an upstream that
// reports none (llama.cpp) gets 0, custody counting none of its own.
func TestReasoningTokens(t *testing.T) {
	for _, tc := range []struct {
		name, details string
		want          int
	}{
		{"reported", `,"completion_tokens_details":{"reasoning_tokens":5}`, 5},
		{"not reported", ``, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			usage := `"usage":{"prompt_tokens":3,"completion_tokens":7` + tc.details + `}`
			r, _ := ParseRequest([]byte(`{"model":"m","input":"hi","reasoning":{"effort":"low"}}`))
			plain, err := r.FromChat([]byte(`{"id":"c1","model":"m","choices":[{"message":{"content":"Hi.","reasoning_content":"Greet them."},"finish_reason":"stop"}],`+usage+`}`), 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := reasoningTokens(t, plain); got != tc.want {
				t.Errorf("plain: reasoning_tokens %d, want %d\n%s", got, tc.want, plain)
			}
			tr := r.NewStreamTranslator(5)
			for _, c := range []string{
				`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"Greet them."}}]}`,
				`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi."}}]}`,
				`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`{"id":"c1","model":"m","choices":[],` + usage + `}`,
			} {
				if _, err := tr.Chunk([]byte(c)); err != nil {
					t.Fatal(err)
				}
			}
			end, err := tr.End()
			if err != nil {
				t.Fatal(err)
			}
			evs := split(t, end)
			last := evs[len(evs)-1]
			if last.name != "response.completed" {
				t.Fatalf("last event %s", last.name)
			}
			var ev struct {
				Response json.RawMessage `json:"response"`
			}
			if err := json.Unmarshal(last.data, &ev); err != nil {
				t.Fatal(err)
			}
			if got := reasoningTokens(t, ev.Response); got != tc.want {
				t.Errorf("stream: reasoning_tokens %d, want %d\n%s", got, tc.want, last.data)
			}
		})
	}
}

// reasoningTokens is a Response's usage.output_tokens_details.reasoning_tokens
// (-1 when the member is missing).
func reasoningTokens(t *testing.T, body []byte) int {
	t.Helper()
	var o struct {
		Usage struct {
			OutputTokens        int `json:"output_tokens"`
			OutputTokensDetails struct {
				ReasoningTokens *int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if o.Usage.OutputTokens != 7 {
		t.Errorf("output_tokens %d, want 7", o.Usage.OutputTokens)
	}
	if o.Usage.OutputTokensDetails.ReasoningTokens == nil {
		return -1
	}
	return *o.Usage.OutputTokensDetails.ReasoningTokens
}
