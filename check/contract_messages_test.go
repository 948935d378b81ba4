package check

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/anthropic"
)

// messagesAnswerOfBody is MessagesAnswer as it was when it decoded the
// body a second time: the reference the answer read from
// anthropic.ParseResponse's Response is held to.
func messagesAnswerOfBody(body []byte) Answer {
	var m struct {
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
		Content      []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		Usage *struct {
			OutputTokens *int `json:"output_tokens"`
		} `json:"usage"`
	}
	a := Answer{CompletionTokens: -1}
	if json.Unmarshal(body, &m) != nil {
		return a
	}
	if m.Usage != nil && m.Usage.OutputTokens != nil {
		a.CompletionTokens = *m.Usage.OutputTokens
	}
	ch := AnswerChoice{}
	if m.StopReason != nil {
		ch.Finish = finishOfStop(*m.StopReason)
		ch.AtStop = *m.StopReason == anthropic.StopSequence
	}
	if m.StopSequence != nil {
		ch.StopSequence = *m.StopSequence
	}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			ch.Calls = append(ch.Calls, Call{Name: b.Name, Arguments: string(b.Input)})
		}
	}
	ch.Text = text.String()
	a.Choices = []AnswerChoice{ch}
	return a
}

// TestMessagesAnswerOfResponse: the answer read from the parsed Response
// is the one the body decoded again gave, for every wire case and for
// the members only the contract reads given as null, absent, escaped or
// of the wrong type.
func TestMessagesAnswerOfResponse(t *testing.T) {
	bodies := map[string]string{}
	for _, tc := range messagesCases {
		plain, _ := msgAnswer(tc.stop, tc.tokens, tc.blocks...)
		bodies[tc.name] = string(plain)
	}
	head := `{"id":"msg_1","type":"message","role":"assistant","model":"m",`
	for name, rest := range map[string]string{
		"usage absent":              `"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`,
		"output_tokens null":        `"content":[{"type":"text","text":"hi"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":null}}`,
		"output_tokens absent":      `"content":[{"type":"text","text":"hi"}],"stop_reason":"max_tokens","usage":{"input_tokens":1}}`,
		"output_tokens 0":           `"content":[],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":0}}`,
		"stop_sequence number":      `"content":[{"type":"text","text":"hi"}],"stop_reason":"stop_sequence","stop_sequence":5,"usage":{"output_tokens":3}}`,
		"stop_sequence object":      `"content":[{"type":"text","text":"hi"}],"stop_reason":"stop_sequence","stop_sequence":{"a":1},"usage":{"output_tokens":3}}`,
		"stop_sequence escaped":     `"content":[{"type":"text","text":"hi"}],"stop_reason":"stop_sequence","stop_sequence":"a\"b\u00e9\n","usage":{"output_tokens":3}}`,
		"stop_sequence null":        `"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"output_tokens":3}}`,
		"name number in text block": `"content":[{"type":"text","text":"hi","name":1}],"stop_reason":"end_turn","usage":{"output_tokens":3}}`,
		"name array in tool_use":    `"content":[{"type":"tool_use","id":"t","name":["f"],"input":{}}],"stop_reason":"tool_use","usage":{"output_tokens":3}}`,
		"name null in tool_use":     `"content":[{"type":"tool_use","id":"t","name":null,"input":{}}],"stop_reason":"tool_use","usage":{"output_tokens":3}}`,
		"name escaped":              `"content":[{"type":"tool_use","id":"t","name":"f\u0041\\x","input":{"a":[1,2]}}],"stop_reason":"tool_use","usage":{"output_tokens":3}}`,
		"input absent and null":     `"content":[{"type":"tool_use","id":"t","name":"f"},{"type":"tool_use","id":"u","name":"g","input":null}],"stop_reason":"tool_use","usage":{"output_tokens":3}}`,
		"content null":              `"content":null,"stop_reason":"end_turn","usage":{"output_tokens":3}}`,
		"stop_reason null":          `"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"stop_reason":null,"usage":{"output_tokens":3}}`,
		"invalid utf-8 name":        "\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\xff\",\"input\":{}}],\"stop_reason\":\"tool_use\",\"usage\":{\"output_tokens\":3}}",
	} {
		bodies[name] = head + rest
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			r, err := anthropic.ParseResponse([]byte(body))
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if got, want := MessagesAnswer(r), messagesAnswerOfBody([]byte(body)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", body, got, want)
			}
		})
	}
}
