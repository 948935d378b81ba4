package check

import (
	"slices"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/responses"
)

// llama.cpp (80fb11a) answers /v1/responses "completed" where
// max_output_tokens cut the answer (the API says "incomplete"): such a
// Response without a call is read as cut, not held to a forced call or a
// format it had no room to finish; under the limit it still is, and so is
// a chat answer that says stop.
func TestResponsesCompletedAtLimit(t *testing.T) {
	cases := []struct {
		name, request string
		tokens        int
		want          []custody.Code
	}{
		{"required, at the limit", respFunctionTools + `,"tool_choice":"required","max_output_tokens":8`, 8, nil},
		{"named, at the limit", respFunctionTools + `,"tool_choice":{"type":"function","name":"weather"},"max_output_tokens":8`, 8, nil},
		{"json_object, at the limit", `"text":{"format":{"type":"json_object"}},"max_output_tokens":8`, 8, nil},
		{"required, under the limit", respFunctionTools + `,"tool_choice":"required","max_output_tokens":8`, 7, []custody.Code{custody.CodeContractToolChoiceIgnored}},
		{"json_object, under the limit", `"text":{"format":{"type":"json_object"}},"max_output_tokens":8`, 7, []custody.Code{custody.CodeContractFormatInvalid}},
		{"required, no limit", respFunctionTools + `,"tool_choice":"required"`, 8, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := responses.ParseRequest([]byte(`{"model":"m","input":"q",` + tc.request + `}`))
			if err != nil {
				t.Fatal(err)
			}
			plain, events := respAnswer("completed", tc.tokens, msgBlock{text: "Sure: {"})
			parsed, err := responses.ParseResponse(plain)
			if err != nil {
				t.Fatal(err)
			}
			c := ResponsesContract(r)
			if got := codes(c.Check(ResponsesAnswer(parsed), nil)); !slices.Equal(got, tc.want) {
				t.Errorf("plain: %v, want %v", got, tc.want)
			}
			s := c.NewResponsesStream()
			for _, e := range events {
				s.Event(e[0], []byte(e[1]))
			}
			if got := codes(s.Contract().Check(s.Answer(), nil)); !slices.Equal(got, tc.want) {
				t.Errorf("streamed: %v, want %v", got, tc.want)
			}
		})
	}
	// A chat answer says its finish: stop at max_tokens is a stop.
	c := Contract{ToolChoice: ChoiceRequired, MaxTokens: 8, Tools: []Tool{{Name: "weather"}}}
	a := Answer{Choices: []AnswerChoice{{Finish: "stop", Text: "no"}}, CompletionTokens: 8}
	if got := codes(c.Check(a, nil)); !slices.Equal(got, []custody.Code{custody.CodeContractToolChoiceIgnored}) {
		t.Errorf("chat stop at max_tokens: %v", got)
	}
}
