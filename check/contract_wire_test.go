package check

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/responses"
)

// The contract on the Messages and Responses wires (a request passed
// through): each clause, on a complete answer and on the same answer
// streamed, caught with the chat code.

const msgTools = `"tools":[{"name":"weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},` +
	`{"name":"book","strict":true,"input_schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}}]`

// msgBlock is a content block of a Messages answer: text, or a tool_use
// of name with input (raw JSON; a stream sends it in two fragments).
type msgBlock struct{ text, name, input string }

func msgAnswer(stop string, outputTokens int, blocks ...msgBlock) (plain []byte, events [][2]string) {
	var content []string
	ev := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		events = append(events, [2]string{typ, string(b)})
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": "m", "content": []any{}, "usage": map[string]any{"input_tokens": 5, "output_tokens": 1}}})
	for i, b := range blocks {
		if b.name == "" {
			t, _ := json.Marshal(b.text)
			content = append(content, `{"type":"text","text":`+string(t)+`}`)
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			half := len(b.text) / 2
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b.text[:half]}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b.text[half:]}})
		} else {
			input := b.input
			if !json.Valid([]byte(input)) {
				input = `"` + input + `"` // a plain body can only carry it as some JSON value
			}
			content = append(content, `{"type":"tool_use","id":"tu","name":"`+b.name+`","input":`+input+`}`)
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": "tu", "name": b.name, "input": map[string]any{}}})
			half := len(b.input) / 2
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": b.input[:half]}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": b.input[half:]}})
		}
		ev("content_block_stop", map[string]any{"index": i})
	}
	var matched any
	if stop == "stop_sequence" {
		matched = "zebra" // the cases' stop sequence
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": matched},
		"usage": map[string]any{"output_tokens": outputTokens}})
	ev("message_stop", map[string]any{})
	plain = []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[` + strings.Join(content, ",") +
		`],"stop_reason":"` + stop + `","stop_sequence":` + mustJSON(matched) + `,"usage":{"input_tokens":5,"output_tokens":` + itoa(outputTokens) + `}}`)
	return plain, events
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

var messagesCases = []struct {
	name, request string
	stop          string
	tokens        int
	blocks        []msgBlock
	want          []custody.Code
}{
	{"text, nothing asked", ``, "end_turn", 3, []msgBlock{{text: "hello there"}}, nil},
	{"declared call", msgTools, "tool_use", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}}, nil},
	{"undeclared tool", msgTools, "tool_use", 3, []msgBlock{{name: "rm_rf", input: `{}`}}, []custody.Code{custody.CodeContractToolUnknown}},
	{"input misses required", msgTools, "tool_use", 3, []msgBlock{{name: "weather", input: `{"town":"Oslo"}`}}, []custody.Code{custody.CodeContractArgumentsInvalid}},
	{"strict input broken", msgTools, "tool_use", 3, []msgBlock{{name: "book", input: `{"n":"two"}`}}, []custody.Code{custody.CodeContractSchemaInvalid}},
	{"tool_choice none ignored", msgTools + `,"tool_choice":{"type":"none"}`, "tool_use", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"tool_choice any ignored", msgTools + `,"tool_choice":{"type":"any"}`, "end_turn", 3, []msgBlock{{text: "no tools today"}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"tool_choice tool, other called", msgTools + `,"tool_choice":{"type":"tool","name":"book"}`, "tool_use", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"tool_choice tool honoured", msgTools + `,"tool_choice":{"type":"tool","name":"book"}`, "tool_use", 3, []msgBlock{{name: "book", input: `{"n":2}`}}, nil},
	{"parallel use disabled", msgTools + `,"tool_choice":{"type":"auto","disable_parallel_tool_use":true}`, "tool_use", 3,
		[]msgBlock{{name: "weather", input: `{"city":"Oslo"}`}, {name: "weather", input: `{"city":"Rome"}`}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"parallel use allowed", msgTools, "tool_use", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}, {name: "weather", input: `{"city":"Rome"}`}}, nil},
	{"tool_use without a block", msgTools, "tool_use", 3, []msgBlock{{text: "let me check"}}, []custody.Code{custody.CodeContractFinishInvalid}},
	{"block with end_turn", msgTools, "end_turn", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}}, []custody.Code{custody.CodeContractFinishInvalid}},
	{"max_tokens held", ``, "max_tokens", 16, []msgBlock{{text: "a b c"}}, nil},
	{"max_tokens exceeded", ``, "max_tokens", 17, []msgBlock{{text: "a b c"}}, []custody.Code{custody.CodeContractLimitExceeded}},
	{"stop sequence honoured", `"stop_sequences":["zebra"]`, "stop_sequence", 3, []msgBlock{{text: "the story"}}, nil},
	{"stop sequence kept", `"stop_sequences":["zebra"]`, "stop_sequence", 3, []msgBlock{{text: "the zebra story"}}, []custody.Code{custody.CodeContractStopIgnored}},
	{"stop at a sequence not asked for", `"stop_sequences":["lion"]`, "stop_sequence", 3, []msgBlock{{text: "the story"}}, []custody.Code{custody.CodeContractFinishInvalid}},
	{"stop at a sequence with none asked", ``, "stop_sequence", 3, []msgBlock{{text: "the story"}}, []custody.Code{custody.CodeContractFinishInvalid}},
	{"stop sequence run past", `"stop_sequences":["zebra"]`, "end_turn", 3, []msgBlock{{text: "the zebra story"}}, []custody.Code{custody.CodeContractStopIgnored}},
	{"any with a server tool declared", `"tools":[{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"any"}`, "end_turn", 3, []msgBlock{{text: "searched"}}, nil},
	{"tool naming a server tool", msgTools[:len(msgTools)-1] + `,{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"tool","name":"web_search"}`, "end_turn", 3, []msgBlock{{text: "searched"}}, nil},
	{"Anthropic tool called by name", `"tools":[{"type":"bash_20250124","name":"bash"}]`, "tool_use", 3, []msgBlock{{name: "bash", input: `{"command":"ls"}`}}, nil},
	{"pause_turn with any", msgTools + `,"tool_choice":{"type":"any"}`, "pause_turn", 3, []msgBlock{{text: "searching"}}, nil},
}

func TestMessagesContract(t *testing.T) {
	for _, tc := range messagesCases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"q"}]`
			if tc.request != "" {
				body += "," + tc.request
			}
			r, err := anthropic.ParseRequest([]byte(body + "}"))
			if err != nil {
				t.Fatal(err)
			}
			plain, events := msgAnswer(tc.stop, tc.tokens, tc.blocks...)
			parsed, err := anthropic.ParseResponse(plain)
			if err != nil {
				t.Fatalf("%s: %v", plain, err)
			}
			c := MessagesContract(r)
			if got := codes(c.Check(MessagesAnswer(parsed), nil)); !slices.Equal(got, tc.want) {
				t.Errorf("plain: %v, want %v", got, tc.want)
			}
			c = MessagesContract(r)
			s := c.NewMessagesStream()
			var v anthropic.StreamValidator
			for _, e := range events {
				if err := v.Event([]byte(e[1])); err != nil {
					t.Fatalf("%s: %v", e[1], err)
				}
				s.Event(e[0], []byte(e[1]))
			}
			if got := codes(s.Contract().Check(s.Answer(), nil)); !slices.Equal(got, tc.want) {
				t.Errorf("streamed: %v, want %v", got, tc.want)
			}
		})
	}
}

// A stream's tool_use input that never joins into an object is caught
// as not one (NotObject: the Messages front rejects it).
func TestMessagesStreamInputNotObject(t *testing.T) {
	r, _ := anthropic.ParseRequest([]byte(`{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"q"}],` + msgTools + `}`))
	_, events := msgAnswer("tool_use", 3, msgBlock{name: "weather", input: `{"city": Oslo`})
	c := MessagesContract(r)
	s := c.NewMessagesStream()
	for _, e := range events {
		s.Event(e[0], []byte(e[1]))
	}
	vs := c.Check(s.Answer(), nil)
	if len(vs) != 1 || vs[0].Code != custody.CodeContractArgumentsInvalid || !vs[0].NotObject {
		t.Fatalf("%+v", vs)
	}
}

const respFunctionTools = `"tools":[{"type":"function","name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},` +
	`{"type":"function","name":"book","strict":true,"parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}}]`

var respTools = respFunctionTools[:len(respFunctionTools)-1] + `,{"type":"web_search"}]`

// respAnswer is a Response (status, output tokens, items: text, or a
// function_call of name with arguments) and its stream.
func respAnswer(status string, outputTokens int, blocks ...msgBlock) (plain []byte, events [][2]string) {
	seq := 0
	ev := func(typ string, v map[string]any) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(v)
		events = append(events, [2]string{typ, string(b)})
	}
	obj := func(status string, output []any, usage bool) map[string]any {
		o := map[string]any{"id": "resp_1", "object": "response", "model": "m", "status": status, "output": output}
		if status == "incomplete" {
			o["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		}
		if usage {
			o["usage"] = map[string]any{"input_tokens": 5, "output_tokens": outputTokens, "total_tokens": 5 + outputTokens}
		}
		return o
	}
	ev("response.created", map[string]any{"response": obj("in_progress", []any{}, false)})
	var output []any
	for i, b := range blocks {
		if b.name == "" {
			item := map[string]any{"type": "message", "id": "m", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": b.text, "annotations": []any{}}}}
			output = append(output, item)
			ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"type": "message", "id": "m", "role": "assistant", "content": []any{}}})
			half := len(b.text) / 2
			ev("response.output_text.delta", map[string]any{"output_index": i, "item_id": "m", "content_index": 0, "delta": b.text[:half]})
			ev("response.output_text.delta", map[string]any{"output_index": i, "item_id": "m", "content_index": 0, "delta": b.text[half:]})
			ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
		} else {
			item := map[string]any{"type": "function_call", "id": "fc", "call_id": "c", "name": b.name, "arguments": b.input, "status": "completed"}
			output = append(output, item)
			ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"type": "function_call", "id": "fc", "call_id": "c", "name": b.name, "arguments": ""}})
			half := len(b.input) / 2
			ev("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": "fc", "delta": b.input[:half]})
			ev("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": "fc", "delta": b.input[half:]})
			ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
		}
	}
	final := obj(status, output, true)
	ev("response."+status, map[string]any{"response": final})
	plain, _ = json.Marshal(final)
	return plain, events
}

var responsesCases = []struct {
	name, request string
	status        string
	tokens        int
	blocks        []msgBlock
	want          []custody.Code
}{
	{"text, nothing asked", ``, "completed", 3, []msgBlock{{text: "hello there"}}, nil},
	{"declared call", respTools, "completed", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}}, nil},
	{"undeclared tool", respTools, "completed", 3, []msgBlock{{name: "rm_rf", input: `{}`}}, []custody.Code{custody.CodeContractToolUnknown}},
	{"built-in tool is no function", respTools, "completed", 3, []msgBlock{{name: "web_search", input: `{}`}}, []custody.Code{custody.CodeContractToolUnknown}},
	{"arguments not JSON", respTools, "completed", 3, []msgBlock{{name: "weather", input: `{"city": Oslo`}}, []custody.Code{custody.CodeContractArgumentsInvalid}},
	{"arguments miss required", respTools, "completed", 3, []msgBlock{{name: "weather", input: `{"town":"Oslo"}`}}, []custody.Code{custody.CodeContractArgumentsInvalid}},
	{"strict arguments broken", respTools, "completed", 3, []msgBlock{{name: "book", input: `{"n":"two"}`}}, []custody.Code{custody.CodeContractSchemaInvalid}},
	{"tool_choice none ignored", respTools + `,"tool_choice":"none"`, "completed", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"tool_choice required ignored", respFunctionTools + `,"tool_choice":"required"`, "completed", 3, []msgBlock{{text: "no"}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"tool_choice function, other called", respTools + `,"tool_choice":{"type":"function","name":"book"}`, "completed", 3, []msgBlock{{name: "weather", input: `{"city":"Oslo"}`}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"parallel calls refused", respTools + `,"parallel_tool_calls":false`, "completed", 3,
		[]msgBlock{{name: "weather", input: `{"city":"Oslo"}`}, {name: "weather", input: `{"city":"Rome"}`}}, []custody.Code{custody.CodeContractToolChoiceIgnored}},
	{"required with a built-in tool declared", respTools + `,"tool_choice":"required"`, "completed", 3, []msgBlock{{text: "searched"}}, nil},
	{"json_object answered", `"text":{"format":{"type":"json_object"}}`, "completed", 3, []msgBlock{{text: `{"a":1}`}}, nil},
	{"json_object ignored", `"text":{"format":{"type":"json_object"}}`, "completed", 3, []msgBlock{{text: `Sure: {`}}, []custody.Code{custody.CodeContractFormatInvalid}},
	{"json_schema broken", `"text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object","required":["a"]}}}`, "completed", 3, []msgBlock{{text: `{"b":1}`}}, []custody.Code{custody.CodeContractFormatInvalid}},
	{"json_schema strict broken", `"text":{"format":{"type":"json_schema","name":"s","strict":true,"schema":{"type":"object","required":["a"]}}}`, "completed", 3, []msgBlock{{text: `{"b":1}`}}, []custody.Code{custody.CodeContractSchemaInvalid}},
	{"max_output_tokens held", `"max_output_tokens":16`, "incomplete", 16, []msgBlock{{text: "a b c"}}, nil},
	{"max_output_tokens exceeded", `"max_output_tokens":16`, "incomplete", 17, []msgBlock{{text: "a b c"}}, []custody.Code{custody.CodeContractLimitExceeded}},
}

func TestResponsesContract(t *testing.T) {
	for _, tc := range responsesCases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":"m","input":"q"`
			if tc.request != "" {
				body += "," + tc.request
			}
			r, err := responses.ParseRequest([]byte(body + "}"))
			if err != nil {
				t.Fatal(err)
			}
			plain, events := respAnswer(tc.status, tc.tokens, tc.blocks...)
			parsed, err := responses.ParseResponse(plain)
			if err != nil {
				t.Fatalf("%s: %v", plain, err)
			}
			c := ResponsesContract(r)
			if got := codes(c.Check(ResponsesAnswer(parsed), nil)); !slices.Equal(got, tc.want) {
				t.Errorf("plain: %v, want %v", got, tc.want)
			}
			c = ResponsesContract(r)
			s := c.NewResponsesStream()
			var v responses.StreamValidator
			for _, e := range events {
				if err := v.Event([]byte(e[1])); err != nil {
					t.Fatalf("%s: %v", e[1], err)
				}
				s.Event(e[0], []byte(e[1]))
			}
			if got := codes(s.Contract().Check(s.Answer(), nil)); !slices.Equal(got, tc.want) {
				t.Errorf("streamed: %v, want %v", got, tc.want)
			}
		})
	}
}

// A Responses stream whose events carry no item is answered by its
// terminal Response's output.
func TestResponsesStreamTerminalOutput(t *testing.T) {
	r, _ := responses.ParseRequest([]byte(`{"model":"m","input":"q",` + respTools + `}`))
	_, events := respAnswer("completed", 3, msgBlock{name: "rm_rf", input: `{}`})
	c := ResponsesContract(r)
	s := c.NewResponsesStream()
	s.Event(events[0][0], []byte(events[0][1]))
	last := events[len(events)-1]
	s.Event(last[0], []byte(last[1]))
	if got := codes(c.Check(s.Answer(), nil)); !slices.Equal(got, []custody.Code{custody.CodeContractToolUnknown}) {
		t.Fatalf("%v", got)
	}
}
