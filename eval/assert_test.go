package eval

import (
	"strings"
	"testing"
	"time"
)

func mustCase(t *testing.T, line string) Case {
	t.Helper()
	cases, err := Parse("t.jsonl", []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return cases[0]
}

// TestAssertions: each assertion, passing and failing, with the reason
// it gives (which never quotes the answer).
func TestAssertions(t *testing.T) {
	const secretAnswer = "the answer is SECRET-42"
	for _, tc := range []struct {
		name    string
		assert  string
		content string
		calls   []toolCall
		latency time.Duration
		want    string // "" passes; else a fragment of the reason
	}{
		{"contains", `{"contains": ["alpha", "beta"]}`, "alpha and beta", nil, 0, ""},
		{"contains missing", `{"contains": ["alpha", "beta"]}`, "alpha only", nil, 0, "contains[1] missing"},
		{"contains one string", `{"contains": "beta"}`, "alpha", nil, 0, "contains[0] missing"},
		{"not_contains", `{"not_contains": ["sorry"]}`, "here it is", nil, 0, ""},
		{"not_contains present", `{"not_contains": ["x", "sorry"]}`, "sorry, no", nil, 0, "not_contains[1] present"},
		{"regex", `{"regex": "^alpha\\d+ beta"}`, "alpha12 beta", nil, 0, ""},
		{"regex fails", `{"regex": "^beta"}`, "alpha beta", nil, 0, "regex does not match"},
		{"equals trims", `{"equals": " four "}`, "four\n", nil, 0, ""},
		{"equals differs", `{"equals": "four"}`, "Four", nil, 0, "equals: the answer differs"},
		{"schema", `{"json_schema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9}}}}`, `{"n": 3}`, nil, 0, ""},
		{"schema not json", `{"json_schema": {"type": "object"}}`, secretAnswer, nil, 0, "not one JSON value"},
		{"schema type", `{"json_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}`, `{"n": 2.5}`, nil, 0, "$.n: want integer, got number"},
		{"schema required", `{"json_schema": {"required": ["n"]}}`, `{"m": 1}`, nil, 0, `required member "n" missing`},
		{"schema additional", `{"json_schema": {"properties": {"a": true}, "additionalProperties": false}}`, `{"a": 1, "SECRET": 2}`, nil, 0, "member not allowed"},
		{"schema enum", `{"json_schema": {"enum": ["yes", "no"]}}`, `"SECRET"`, nil, 0, "not one of the enum"},
		{"schema items", `{"json_schema": {"type": "array", "minItems": 1, "items": {"type": "string", "maxLength": 3}}}`, `["ab", "SECRET"]`, nil, 0, "$[1]: 6 characters, want at most 3"},
		{"schema anyOf", `{"json_schema": {"anyOf": [{"type": "string"}, {"type": "null"}]}}`, `null`, nil, 0, ""},
		{"schema anyOf fails", `{"json_schema": {"anyOf": [{"type": "string"}, {"type": "null"}]}}`, `1`, nil, 0, "none of anyOf"},
		{"schema pattern", `{"json_schema": {"type": "string", "pattern": "^[a-z]+$"}}`, `"SECRET"`, nil, 0, "does not match the pattern"},
		{"schema duplicate", `{"json_schema": {"type": "object"}}`, `{"SECRET": 1, "SECRET": 2}`, nil, 0, "not one JSON value"},
		{"schema const", `{"json_schema": {"const": {"a": [1, 2.0]}}}`, `{"a": [1.0, 2]}`, nil, 0, ""},
		{"schema exclusive", `{"json_schema": {"exclusiveMaximum": 5}}`, `5`, nil, 0, "exclusive maximum"},
		{"tool_call", `{"tool_call": {"name": "get_weather", "arguments": {"type": "object", "required": ["city"]}}}`, "", []toolCall{{"other", "{}"}, {"get_weather", `{"city": "Paris"}`}}, 0, ""},
		{"tool_call none", `{"tool_call": {"name": "get_weather"}}`, secretAnswer, nil, 0, "calls no tool"},
		{"tool_call other", `{"tool_call": {"name": "get_weather"}}`, "", []toolCall{{"other", "{}"}}, 0, "no call of the tool"},
		{"tool_call arguments", `{"tool_call": {"name": "f", "arguments": {"required": ["city"]}}}`, "", []toolCall{{"f", `{"town": "SECRET"}`}}, 0, `required member "city" missing`},
		{"tool_call bad arguments", `{"tool_call": {"name": "f", "arguments": {"type": "object"}}}`, "", []toolCall{{"f", `SECRET`}}, 0, "not one JSON value"},
		{"latency", `{"max_latency": "1s"}`, "", nil, 500 * time.Millisecond, ""},
		{"latency over", `{"max_latency": "1s"}`, "", nil, 1500 * time.Millisecond, "max_latency: 1.5s, over 1s"},
		{"all must hold", `{"contains": "a", "regex": "b$"}`, "a c", nil, 0, "regex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCase(t, `{"id": "t", "prompt": "p", "assert": `+tc.assert+`}`)
			got := c.Assert.Check(tc.content, tc.calls, tc.latency)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("failed: %s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("reason %q, want %q", got, tc.want)
			}
			if strings.Contains(got, "SECRET") {
				t.Errorf("the reason quotes the answer: %s", got)
			}
		})
	}
}

// TestReadAnswer reads content, tool calls, identity and usage.
func TestReadAnswer(t *testing.T) {
	a, err := readAnswer([]byte(`{"model":"m-1","system_fingerprint":"fp","choices":[{"message":{"content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}],"usage":{"prompt_tokens":7,"completion_tokens":3}}`))
	if err != nil || a.Model != "m-1" || a.Fingerprint != "fp" || a.Content != "" || len(a.ToolCalls) != 1 || a.ToolCalls[0].Name != "f" || a.Prompt != 7 || a.Completion != 3 {
		t.Errorf("%+v %v", a, err)
	}
	if _, err := readAnswer([]byte(`{"choices":[]}`)); err != errNoChoice {
		t.Errorf("no choice: %v", err)
	}
	if _, err := readAnswer([]byte(`<html>`)); err == nil {
		t.Error("not JSON was read")
	}
}
