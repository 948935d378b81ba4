package check

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/custody-gateway/custody/responses"
)

// responsesAnswerOfBody is ResponsesAnswer as it was when it decoded the
// body a second time: the reference the answer read from
// responses.ParseResponse's Response is held to.
func responsesAnswerOfBody(body []byte) Answer {
	var r responseObject
	if json.Unmarshal(body, &r) != nil {
		return Answer{CompletionTokens: -1}
	}
	return r.answer()
}

// TestResponsesAnswerOfResponse: the answer read from the parsed Response
// is the one the body decoded again gave, for every wire case and for
// the members only the contract reads given as null, absent, escaped or
// of the wrong type.
func TestResponsesAnswerOfResponse(t *testing.T) {
	bodies := map[string]string{}
	for _, tc := range responsesCases {
		plain, _ := respAnswer(tc.status, tc.tokens, tc.blocks...)
		bodies[tc.name] = string(plain)
	}
	head := `{"id":"resp_1","object":"response","model":"m",`
	text := `{"type":"message","content":[{"type":"output_text","text":"hi"}]}`
	for name, rest := range map[string]string{
		"usage absent":                `"status":"completed","output":[` + text + `]}`,
		"usage null":                  `"status":"completed","output":[` + text + `],"usage":null}`,
		"output_tokens null":          `"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[` + text + `],"usage":{"input_tokens":1,"output_tokens":null}}`,
		"output_tokens absent":        `"status":"incomplete","output":[` + text + `],"usage":{"input_tokens":1}}`,
		"output_tokens 0":             `"status":"incomplete","output":[],"usage":{"input_tokens":1,"output_tokens":0}}`,
		"incomplete_details null":     `"status":"incomplete","incomplete_details":null,"output":[` + text + `],"usage":{"output_tokens":3}}`,
		"incomplete_details empty":    `"status":"incomplete","incomplete_details":{},"output":[` + text + `],"usage":{"output_tokens":3}}`,
		"incomplete_details filter":   `"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[` + text + `],"usage":{"output_tokens":3}}`,
		"incomplete_details string":   `"status":"incomplete","incomplete_details":"x","output":[` + text + `],"usage":{"output_tokens":3}}`,
		"reason number":               `"status":"incomplete","incomplete_details":{"reason":5},"output":[` + text + `],"usage":{"output_tokens":3}}`,
		"name number":                 `"status":"completed","output":[{"type":"function_call","name":5,"arguments":"{}"}],"usage":{"output_tokens":3}}`,
		"arguments object":            `"status":"completed","output":[{"type":"function_call","name":"f","arguments":{"a":1}}],"usage":{"output_tokens":3}}`,
		"arguments escaped":           `"status":"completed","output":[{"type":"function_call","name":"f\u0041","arguments":"{\"city\":\"Oslo\\n\"}"}],"usage":{"output_tokens":3}}`,
		"name and arguments null":     `"status":"completed","output":[{"type":"function_call","name":null,"arguments":null}],"usage":{"output_tokens":3}}`,
		"name on a message":           `"status":"completed","output":[{"type":"message","name":[],"content":[]}],"usage":{"output_tokens":3}}`,
		"output null":                 `"status":"completed","output":null,"usage":{"output_tokens":3}}`,
		"reasoning and call":          `"status":"completed","output":[{"type":"reasoning","content":[]},{"type":"function_call","name":"g","arguments":""},` + text + `],"usage":{"output_tokens":3}}`,
		"invalid utf-8 in arguments":  "\"status\":\"completed\",\"output\":[{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"\xff\"}],\"usage\":{\"output_tokens\":3}}",
		"control escape in arguments": `"status":"completed","output":[{"type":"function_call","name":"f","arguments":"\t\u0000"}],"usage":{"output_tokens":3}}`,
	} {
		bodies[name] = head + rest
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			r, err := responses.ParseResponse([]byte(body))
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if got, want := ResponsesAnswer(r), responsesAnswerOfBody([]byte(body)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", body, got, want)
			}
		})
	}
}
