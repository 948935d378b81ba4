package eval

import (
	"fmt"
	"strings"
	"time"
)

// Check applies the assertions to an answer's content, tool calls and
// latency. It returns "" when every assertion holds, else the first that
// does not, named by assertion and index, never quoting the answer.
func (a *Assert) Check(content string, calls []toolCall, latency time.Duration) string {
	for i, s := range a.Contains {
		if !strings.Contains(content, s) {
			return fmt.Sprintf("contains[%d] missing", i)
		}
	}
	for i, s := range a.NotContains {
		if strings.Contains(content, s) {
			return fmt.Sprintf("not_contains[%d] present", i)
		}
	}
	if a.Regex != nil && !a.Regex.MatchString(content) {
		return "regex does not match"
	}
	if a.Equals != nil && strings.TrimSpace(content) != strings.TrimSpace(*a.Equals) {
		return "equals: the answer differs"
	}
	if a.JSONSchema != nil {
		v, err := decodeJSON([]byte(strings.TrimSpace(content)), false)
		if err != nil {
			return "json_schema: the answer is not one JSON value"
		}
		if err := a.JSONSchema.Validate(v); err != nil {
			return "json_schema: " + err.Error()
		}
	}
	if tc := a.ToolCall; tc != nil {
		if why := tc.check(calls); why != "" {
			return why
		}
	}
	if a.MaxLatency > 0 && latency > a.MaxLatency {
		return fmt.Sprintf("max_latency: %s, over %s", latency.Round(time.Millisecond), a.MaxLatency)
	}
	return ""
}

// check passes when one of calls is of the tool and, if a schema is
// given, has valid arguments.
func (tc *ToolCallAssert) check(calls []toolCall) string {
	if len(calls) == 0 {
		return "tool_call: the answer calls no tool"
	}
	why := "tool_call: no call of the tool"
	for _, c := range calls {
		if c.Name != tc.Name {
			continue
		}
		if tc.Arguments == nil {
			return ""
		}
		v, err := decodeJSON([]byte(c.Arguments), false)
		if err != nil {
			why = "tool_call.arguments: not one JSON value"
			continue
		}
		if err := tc.Arguments.Validate(v); err != nil {
			why = "tool_call.arguments: " + err.Error()
			continue
		}
		return ""
	}
	return why
}
