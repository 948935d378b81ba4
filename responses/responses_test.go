package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func paramOf(t *testing.T, err error) (custody.Code, string) {
	t.Helper()
	var e *custody.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *custody.Error", err)
	}
	return e.Code, e.Param
}

func TestParseRequestRefuses(t *testing.T) {
	for _, tc := range []struct{ name, body, param string }{
		{"not json", `{`, ""},
		{"array", `[]`, ""},
		{"no model", `{"input":"hi"}`, "model"},
		{"no input", `{"model":"m"}`, "input"},
		{"empty input", `{"model":"m","input":[]}`, "input"},
		{"input of a number", `{"model":"m","input":3}`, "input"},
		{"bad role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role"},
		{"function_call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0]"},
		{"output without call_id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id"},
		{"duplicate model", `{"model":"m","model":"n","input":"hi"}`, ""},
		{"case variant input", `{"model":"m","input":"hi","Input":"ho"}`, ""},
		{"duplicate role in an item", `{"model":"m","input":[{"role":"user","role":"system","content":"hi"}]}`, ""},
		{"bad tool_choice", `{"model":"m","input":"hi","tool_choice":"sometimes"}`, "tool_choice"},
		{"max_output_tokens zero", `{"model":"m","input":"hi","max_output_tokens":0}`, "max_output_tokens"},
		{"stream of a string", `{"model":"m","input":"hi","stream":"true"}`, "stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequest([]byte(tc.body))
			if err == nil {
				t.Fatal("accepted")
			}
			code, param := paramOf(t, err)
			if code != custody.CodeInvalidRequest || param != tc.param {
				t.Errorf("code %s param %q, want invalid_request %q (%v)", code, param, tc.param, err)
			}
		})
	}
}

func TestToChat(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"string input", `{"model":"m","input":"hi"}`, `{"model":"m","messages":[{"content":"hi","role":"user"}]}`},
		{"instructions, developer, sampling, format",
			`{"model":"m","instructions":"be brief","store":false,"max_output_tokens":9,"temperature":0.2,"top_p":0.5,"user":"u",
			  "metadata":{"k":"v"},"truncation":"disabled","reasoning":{},
			  "text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}},
			  "input":[{"role":"developer","content":"d"},{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:image/png;base64,AA","detail":"low"}]}]}`,
			`{"model":"m","max_tokens":9,"temperature":0.2,"top_p":0.5,"user":"u",
			  "response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"},"strict":true}},
			  "messages":[{"content":"be brief","role":"system"},{"content":"d","role":"system"},
			   {"content":[{"text":"a","type":"text"},{"image_url":{"detail":"low","url":"data:image/png;base64,AA"},"type":"image_url"}],"role":"user"}]}`},
		{"function call round trip",
			`{"model":"m","stream":true,"parallel_tool_calls":false,"tool_choice":{"type":"function","name":"get_weather"},
			  "tools":[{"type":"function","name":"get_weather","description":"d","parameters":{"type":"object"},"strict":true}],
			  "input":[{"role":"user","content":"weather?"},
			   {"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"Looking.","annotations":[]}]},
			   {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
			   {"type":"function_call","call_id":"call_2","name":"get_weather","arguments":"{}"},
			   {"type":"function_call_output","call_id":"call_1","output":"sunny"},
			   {"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"rain"}]}]}`,
			`{"model":"m","stream":true,"stream_options":{"include_usage":true},"parallel_tool_calls":false,
			  "tool_choice":{"type":"function","function":{"name":"get_weather"}},
			  "tools":[{"type":"function","function":{"name":"get_weather","description":"d","parameters":{"type":"object"},"strict":true}}],
			  "messages":[{"content":"weather?","role":"user"},
			   {"content":"Looking.","role":"assistant","tool_calls":[
			     {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			     {"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
			   {"content":"sunny","role":"tool","tool_call_id":"call_1"},{"content":"rain","role":"tool","tool_call_id":"call_2"}]}`},
		{"a call with no assistant text before it",
			`{"model":"m","tool_choice":"required","input":[{"role":"user","content":"x"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
			`{"model":"m","tool_choice":"required","messages":[{"content":"x","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`},
		// A reasoning item goes back as the next assistant message's
		// reasoning_content.
		{"reasoning items",
			`{"model":"m","input":[{"role":"user","content":"x"},
			   {"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"Think."}],"status":"completed"},
			   {"type":"message","role":"assistant","content":[{"type":"output_text","text":"y","annotations":[]}]},
			   {"role":"user","content":"z"},
			   {"type":"reasoning","id":"rs_2","summary":[],"content":[{"type":"reasoning_text","text":"Call."}]},
			   {"type":"function_call","call_id":"c","name":"f","arguments":"{}"},
			   {"type":"function_call_output","call_id":"c","output":"1"}]}`,
			`{"model":"m","messages":[{"content":"x","role":"user"},{"content":"y","reasoning_content":"Think.","role":"assistant"},
			   {"content":"z","role":"user"},
			   {"content":null,"reasoning_content":"Call.","role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
			   {"content":"1","role":"tool","tool_call_id":"c"}]}`},
		// What agents send (TestAgentsOpenAIAgents, TestAgentsOpenAINode).
		{"agent controls",
			`{"model":"m","include":[],"truncation":"auto","max_tool_calls":4,"service_tier":"auto","prompt_cache_key":"k",
			  "safety_identifier":"s","reasoning":{"effort":"low","summary":null},"text":{"verbosity":"medium","format":{"type":"text"}},
			  "input":[{"role":"user","content":[{"type":"input_text","text":""},{"type":"input_image","image_url":"data:image/png;base64,AA"}]}]}`,
			`{"model":"m","reasoning_effort":"low","verbosity":"medium","service_tier":"auto","prompt_cache_key":"k","safety_identifier":"s",
			  "messages":[{"content":[{"text":"","type":"text"},{"image_url":{"url":"data:image/png;base64,AA"},"type":"image_url"}],"role":"user"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			out, err := r.ToChat()
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, out, tc.want)
		})
	}
}

func TestToChatRefuses(t *testing.T) {
	for _, tc := range []struct{ name, body, param string }{
		{"previous_response_id", `{"model":"m","input":"hi","previous_response_id":"resp_1"}`, "previous_response_id"},
		{"conversation", `{"model":"m","input":"hi","conversation":"conv_1"}`, "conversation"},
		{"item reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]"},
		{"reasoning item alone", `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"r"}]}]}`, "input[0]"},
		{"reasoning summary item", `{"model":"m","input":[{"role":"user","content":"x"},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s"}]},{"role":"assistant","content":"y"}]}`, "input[1].summary"},
		{"encrypted reasoning", `{"model":"m","input":[{"role":"user","content":"x"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"},{"role":"assistant","content":"y"}]}`, "input[1].encrypted_content"},
		{"web search tool", `{"model":"m","input":"hi","tools":[{"type":"web_search"}]}`, "tools[0].type"},
		{"reasoning summary", `{"model":"m","input":"hi","reasoning":{"effort":"high","summary":"auto"}}`, "reasoning.summary"},
		{"unknown effort", `{"model":"m","input":"hi","reasoning":{"effort":"extreme"}}`, "reasoning.effort"},
		{"unknown truncation", `{"model":"m","input":"hi","truncation":"middle"}`, "truncation"},
		{"unknown verbosity", `{"model":"m","input":"hi","text":{"verbosity":"loud"}}`, "text.verbosity"},
		{"background", `{"model":"m","input":"hi","background":true}`, "background"},
		{"include", `{"model":"m","input":"hi","include":["reasoning.encrypted_content"]}`, "include"},
		{"file input", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`, "input[0].content[0].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.ToChat()
			if err == nil {
				t.Fatal("translated")
			}
			code, param := paramOf(t, err)
			if code != custody.CodeInvalidRequest || param != tc.param {
				t.Errorf("code %s param %q, want invalid_request %q (%v)", code, param, tc.param, err)
			}
		})
	}
	r, _ := ParseRequest([]byte(`{"model":"m","input":"hi","previous_response_id":"resp_1"}`))
	if _, err := r.ToChat(); !strings.Contains(err.Error(), "never stores conversation text") {
		t.Errorf("the state refusal does not say why: %v", err)
	}
}

func TestFromChat(t *testing.T) {
	r, err := ParseRequest([]byte(`{"model":"m","input":"hi","metadata":{"k":"v"},"tools":[{"type":"function","name":"f"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.FromChat([]byte(`{"id":"c1","model":"m-0827","choices":[{"message":{"content":"Hello.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`), 1700000000)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, got, `{"id":"resp_c1","object":"response","created_at":1700000000,"status":"completed","model":"m-0827",
	  "output":[{"type":"message","id":"msg_c1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello.","annotations":[]}]},
	            {"type":"function_call","id":"fc_call_1","status":"completed","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}],
	  "usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":4},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15},
	  "error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"parallel_tool_calls":true,"previous_response_id":null,
	  "temperature":null,"top_p":null,"tool_choice":"auto","tools":[{"type":"function","name":"f"}],"text":{"format":{"type":"text"}},
	  "truncation":"disabled","metadata":{"k":"v"},"store":false}`)
	rr, err := ParseResponse(got)
	if err != nil {
		t.Fatal(err)
	}
	if rr.ID != "resp_c1" || rr.Model != "m-0827" || rr.PromptTokens() != 12 || rr.Cached() != 4 || rr.Text() != "Hello." || rr.Failure() != nil {
		t.Errorf("read back %+v", rr)
	}
	inc, err := r.FromChat([]byte(`{"id":"c2","model":"m","choices":[{"message":{"content":"a b"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	var o Object
	_ = json.Unmarshal(inc, &o)
	if o.Status != StatusIncomplete || o.IncompleteDetails == nil || o.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("length: %s", inc)
	}
	for _, bad := range []string{`{"error":{"message":"x"}}`, `{"id":"c","choices":[]}`,
		`{"id":"c","choices":[{"message":{"content":"x"},"finish_reason":"abort"}]}`, `nope`} {
		if _, err := r.FromChat([]byte(bad), 1); custody.CodeOf(err) != custody.CodeUpstreamErrorAsSuccess {
			t.Errorf("FromChat(%s) = %v", bad, err)
		}
	}
}

type sseEvent struct {
	name string
	data []byte
}

func split(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, ev := range bytes.Split(bytes.TrimSpace(b), []byte("\n\n")) {
		lines := strings.Split(string(ev), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("malformed event %q", ev)
		}
		e := sseEvent{strings.TrimPrefix(lines[0], "event: "), []byte(strings.TrimPrefix(lines[1], "data: "))}
		var typ struct{ Type string }
		if json.Unmarshal(e.data, &typ) != nil || typ.Type != e.name {
			t.Fatalf("event %s has data type %q", e.name, typ.Type)
		}
		out = append(out, e)
	}
	return out
}

func TestStreamTranslator(t *testing.T) {
	r, _ := ParseRequest([]byte(`{"model":"m","input":"hi","stream":true}`))
	tr := r.NewStreamTranslator(5)
	var all []byte
	for _, c := range []string{
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"lo"}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"c1","model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4}}`,
	} {
		b, err := tr.Chunk([]byte(c))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	b, err := tr.End()
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, b...)
	evs := split(t, all)
	var names []string
	for _, e := range evs {
		names = append(names, e.name)
	}
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v\nwant   %v", names, want)
	}
	jsonEqual(t, evs[4].data, `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_c1","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}`)
	jsonEqual(t, evs[12].data, `{"type":"response.function_call_arguments.done","sequence_number":12,"item_id":"fc_call_1","output_index":1,"name":"f","arguments":"{\"a\":1}"}`)
	var v StreamValidator
	for _, e := range evs {
		if err := v.Event(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.End(); err != nil {
		t.Fatal(err)
	}
	if v.ID != "resp_c1" || v.Status != StatusCompleted || v.Response.PromptTokens() != 7 || v.Response.Text() != "Hello" {
		t.Errorf("validator read %+v %+v", v, v.Response)
	}
}

// TestReasoning: the engine's reasoning is a reasoning output item
// before the message, plain and streamed, in the events openai@7's
// stream helpers accumulate: the item added with empty summary and
// content, its reasoning_text part added, reasoning_text deltas, the
// part and the item done.
func TestReasoning(t *testing.T) {
	r, _ := ParseRequest([]byte(`{"model":"m","input":"hi"}`))
	got, err := r.FromChat([]byte(`{"id":"c1","model":"m","choices":[{"message":{"content":"Hi.","reasoning_content":"Greet."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	var o struct{ Output []json.RawMessage }
	_ = json.Unmarshal(got, &o)
	if len(o.Output) != 2 {
		t.Fatalf("output %s", got)
	}
	jsonEqual(t, o.Output[0], `{"type":"reasoning","id":"rs_c1","status":"completed","summary":[],"content":[{"type":"reasoning_text","text":"Greet."}]}`)

	tr := r.NewStreamTranslator(5)
	var all []byte
	for _, c := range []string{
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"Gr"}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"eet."}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi."}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
	} {
		b, err := tr.Chunk([]byte(c))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	b, err := tr.End()
	if err != nil {
		t.Fatal(err)
	}
	evs := split(t, append(all, b...))
	var names []string
	for _, e := range evs {
		names = append(names, e.name)
	}
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta", "response.reasoning_text.delta",
		"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v\nwant   %v", names, want)
	}
	jsonEqual(t, evs[2].data, `{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"type":"reasoning","id":"rs_c1","status":"in_progress","summary":[],"content":[]}}`)
	jsonEqual(t, evs[3].data, `{"type":"response.content_part.added","sequence_number":3,"item_id":"rs_c1","output_index":0,"content_index":0,"part":{"type":"reasoning_text","text":""}}`)
	jsonEqual(t, evs[4].data, `{"type":"response.reasoning_text.delta","sequence_number":4,"item_id":"rs_c1","output_index":0,"content_index":0,"delta":"Gr"}`)
	jsonEqual(t, evs[6].data, `{"type":"response.reasoning_text.done","sequence_number":6,"item_id":"rs_c1","output_index":0,"content_index":0,"text":"Greet."}`)
	jsonEqual(t, evs[8].data, `{"type":"response.output_item.done","sequence_number":8,"output_index":0,"item":{"type":"reasoning","id":"rs_c1","status":"completed","summary":[],"content":[{"type":"reasoning_text","text":"Greet."}]}}`)
	var v StreamValidator
	for _, e := range evs {
		if err := v.Event(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.End(); err != nil {
		t.Fatal(err)
	}
}

func TestStreamValidator(t *testing.T) {
	created := `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","model":"m","status":"in_progress"}}`
	added := `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message"}}`
	delta := `{"type":"response.output_text.delta","sequence_number":2,"output_index":0,"item_id":"msg_1","delta":"hi"}`
	done := `{"type":"response.completed","sequence_number":3,"response":{"id":"resp_1","object":"response","model":"m","status":"completed","usage":{"input_tokens":3,"output_tokens":1},"output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}]}}`
	for _, tc := range []struct {
		name   string
		events []string
		code   custody.Code
	}{
		{"clean", []string{created, added, delta, done}, ""},
		{"clean with a [DONE]", []string{created, added, delta, done, "[DONE]"}, ""},
		{"gaps in sequence numbers", []string{created, strings.Replace(added, `"sequence_number":1`, `"sequence_number":5`, 1),
			strings.Replace(delta, `"sequence_number":2`, `"sequence_number":9`, 1), strings.Replace(done, `"sequence_number":3`, `"sequence_number":10`, 1)}, ""},
		{"truncated", []string{created, added, delta}, custody.CodeStreamTruncated},
		{"empty", nil, custody.CodeStreamTruncated},
		{"sequence repeats", []string{created, added, strings.Replace(delta, `"sequence_number":2`, `"sequence_number":1`, 1)}, custody.CodeStreamInconsistent},
		{"no sequence number", []string{created, `{"type":"response.in_progress"}`}, custody.CodeStreamInconsistent},
		// llama.cpp's /v1/responses numbers no event: a stream unnumbered
		// from its first event is held to everything else; a number that
		// appears later is a mix.
		{"unnumbered throughout", unnumbered(created, added, delta, done), ""},
		{"numbered after unnumbered", append(unnumbered(created, added), delta), custody.CodeStreamInconsistent},
		{"unnumbered, another response id", unnumbered(created, added, strings.Replace(done, "resp_1", "resp_2", 1)), custody.CodeStreamInconsistent},
		{"another response id", []string{created, added, strings.Replace(done, "resp_1", "resp_2", 1)}, custody.CodeStreamInconsistent},
		{"another model", []string{created, added, strings.Replace(done, `"model":"m"`, `"model":"x"`, 1)}, custody.CodeStreamInconsistent},
		{"not begun with created", []string{added}, custody.CodeStreamInconsistent},
		{"two terminals", []string{created, done, strings.Replace(done, `"sequence_number":3`, `"sequence_number":4`, 1)}, custody.CodeStreamInconsistent},
		{"item skipped", []string{created, strings.Replace(added, `"output_index":0`, `"output_index":1`, 1)}, custody.CodeStreamInconsistent},
		{"delta of an item not added", []string{created, delta}, custody.CodeStreamInconsistent},
		{"[DONE] early", []string{created, "[DONE]"}, custody.CodeStreamInconsistent},
		{"error event", []string{created, `{"type":"error","sequence_number":1,"code":"server_error","message":"x"}`}, custody.CodeUpstreamErrorAsSuccess},
		{"failed", []string{created, `{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","object":"response","model":"m","status":"failed","error":{"code":"server_error"}}}`}, custody.CodeUpstreamErrorAsSuccess},
		{"incomplete with nothing", []string{created, `{"type":"response.incomplete","sequence_number":1,"response":{"id":"resp_1","object":"response","model":"m","status":"incomplete","usage":{"input_tokens":3,"output_tokens":0}}}`}, custody.CodeUpstreamErrorAsSuccess},
		{"completed saying incomplete", []string{created, strings.Replace(done, `"status":"completed"`, `"status":"incomplete"`, 1)}, custody.CodeStreamInconsistent},
		// llama.cpp's /v1/responses names the model only in the terminal
		// Response and gives no output_index: the first event that names
		// the model fixes it, and an index given must still be the next.
		{"llama.cpp: model named at the end", llamaShape(created, added, delta, done), ""},
		{"llama.cpp: model named, then another", llamaShape(created, added,
			`{"type":"response.in_progress","response":{"id":"resp_1","object":"response","model":"x","status":"in_progress"}}`, done), custody.CodeStreamInconsistent},
		{"llama.cpp: an index given is not the next", llamaShape(created, added, strings.Replace(added, `{"type"`, `{"output_index":3,"type"`, 1)), custody.CodeStreamInconsistent},
		{"ambiguous model", []string{`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"shadow","Model":"m"}}`}, custody.CodeResponseAmbiguous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v StreamValidator
			var err error
			for _, e := range tc.events {
				if err = v.Event([]byte(e)); err != nil {
					break
				}
			}
			if err == nil {
				err = v.End()
			}
			if tc.code == "" && err != nil || tc.code != "" && custody.CodeOf(err) != tc.code {
				t.Errorf("got %v, want %q", err, tc.code)
			}
		})
	}
}

// llamaShape is events as llama.cpp sends them: unnumbered, with no
// output_index, and a model only in the terminal event's Response.
func llamaShape(events ...string) []string {
	out := unnumbered(events...)
	for i, e := range out {
		e = strings.Replace(e, `,"output_index":0`, "", 1)
		if !strings.Contains(e, `"status":"completed"`) {
			e = strings.Replace(e, `,"model":"m"`, "", 1)
		}
		out[i] = e
	}
	return out
}

func TestStreamValidatorLateModel(t *testing.T) {
	var v StreamValidator
	for _, e := range llamaShape(
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","model":"m","status":"in_progress"}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message"}}`,
		`{"type":"response.completed","sequence_number":3,"response":{"id":"resp_1","object":"response","model":"m","status":"completed","usage":{"input_tokens":3,"output_tokens":1},"output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}]}}`) {
		if v.Model != "" {
			t.Fatalf("model %q before any event named it", v.Model)
		}
		if err := v.Event([]byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	if v.Model != "m" || v.End() != nil {
		t.Fatalf("model %q after the terminal event named m", v.Model)
	}
}

// unnumbered is events without their sequence_number members.
func unnumbered(events ...string) []string {
	seq := regexp.MustCompile(`,"sequence_number":\d+`)
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = seq.ReplaceAllString(e, "")
	}
	return out
}

func TestParseResponseFailures(t *testing.T) {
	for _, tc := range []struct {
		body string
		code custody.Code
	}{
		{`{"id":"resp_1","object":"response","model":"m","status":"completed"}`, ""},
		{`{"id":"resp_1","object":"response","model":"m","status":"incomplete","usage":{"input_tokens":1,"output_tokens":5}}`, ""},
		{`{"error":{"message":"x","type":"server_error"}}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"resp_1","object":"response","model":"m","status":"failed"}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"resp_1","object":"response","model":"m","status":"in_progress"}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"resp_1","object":"response","model":"m","status":"incomplete","usage":{"input_tokens":1,"output_tokens":0}}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"resp_1","object":"response","model":"m","Model":"x","status":"completed"}`, custody.CodeResponseAmbiguous},
		{`{"id":"resp_1","object":"response","model":"m","usage":{"input_tokens":1,"input_tokens":2}}`, custody.CodeResponseAmbiguous},
		{`7`, custody.CodeUpstreamErrorAsSuccess},
	} {
		r, err := ParseResponse([]byte(tc.body))
		if err == nil {
			err = r.Failure()
		}
		if tc.code == "" && err != nil || tc.code != "" && custody.CodeOf(err) != tc.code {
			t.Errorf("%s: got %v, want %q", tc.body, err, tc.code)
		}
	}
}

func TestErrorBody(t *testing.T) {
	e := custody.Errorf(custody.CodeInvalidRequest, "previous_response_id needs state")
	e.Param = "previous_response_id"
	jsonEqual(t, ErrorBody(e), `{"error":{"message":"previous_response_id needs state","type":"invalid_request_error","code":"invalid_request","param":"previous_response_id"}}`)
	ev := split(t, ErrorEvent(custody.Errorf(custody.CodeModelMismatch, "x"), 7))
	jsonEqual(t, ev[0].data, `{"type":"error","sequence_number":7,"code":"model_mismatch","message":"x","param":null}`)
}

// The members the contract check reads in a function_call item (name,
// arguments) are checked members, in a Response and in a stream event's
// item: a duplicate is response_ambiguous.
func TestFunctionCallMembersAmbiguous(t *testing.T) {
	body := `{"id":"r","object":"response","status":"completed","model":"m","output":[{"type":"function_call","name":"weather","name":"rm_rf","arguments":"{}"}]}`
	if _, err := ParseResponse([]byte(body)); custody.CodeOf(err) != custody.CodeResponseAmbiguous {
		t.Errorf("%v, want response_ambiguous", err)
	}
	var v StreamValidator
	for i, ev := range []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","status":"in_progress","model":"m","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","name":"a","arguments":"","Arguments":"{}"}}`,
	} {
		err := v.Event([]byte(ev))
		if i == 0 && err != nil {
			t.Fatal(err)
		}
		if i == 1 && custody.CodeOf(err) != custody.CodeResponseAmbiguous {
			t.Errorf("%v, want response_ambiguous", err)
		}
	}
}
