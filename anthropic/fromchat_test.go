package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai/openaitest"
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

func TestFromChat(t *testing.T) {
	for _, tc := range []struct{ name, chat, want string }{
		{"text", `{"id":"chatcmpl-1","model":"m-0827","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}`,
			`{"id":"msg_chatcmpl-1","type":"message","role":"assistant","model":"m-0827","content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":2}}`},
		{"length, cached prefix", `{"id":"c2","model":"m","choices":[{"message":{"content":"a b"},"finish_reason":"length"}],"usage":{"prompt_tokens":100,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":64}}}`,
			`{"id":"msg_c2","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"a b"}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":36,"output_tokens":2,"cache_read_input_tokens":64}}`},
		{"tool calls", `{"id":"c3","model":"m","choices":[{"message":{"content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},{"id":"call_2","type":"function","function":{"name":"now","arguments":""}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":9}}`,
			`{"id":"msg_c3","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"call_2","name":"now","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":9}}`},
		// The engine's reasoning is a thinking block, first, with an
		// empty signature: custody cannot sign as Anthropic does.
		{"reasoning", `{"id":"c5","model":"m","choices":[{"message":{"content":"Hi.","reasoning_content":"The user greets."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":6}}`,
			`{"id":"msg_c5","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"The user greets.","signature":""},{"type":"text","text":"Hi."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":6}}`},
		{"reasoning member", `{"id":"c6","model":"m","choices":[{"message":{"content":"Hi.","reasoning":"Greeting."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":4}}`,
			`{"id":"msg_c6","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"Greeting.","signature":""},{"type":"text","text":"Hi."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":4}}`},
		{"content filter", `{"id":"c4","model":"m","choices":[{"message":{"content":null},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":5,"completion_tokens":0}}`,
			`{"id":"msg_c4","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"refusal","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":0}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromChat([]byte(tc.chat))
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, got, tc.want)
			// What custody writes, custody reads back the same way.
			r, err := ParseResponse(got)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Failure(); err != nil {
				t.Errorf("translated answer is a failure: %v", err)
			}
		})
	}
	for _, bad := range []string{
		`{"error":{"message":"boom"}}`,
		`{"id":"c","model":"m","choices":[]}`,
		`{"id":"c","model":"m","choices":[{"message":{"content":"x"},"finish_reason":"abort"}]}`,
		`{"id":"c","model":"m","choices":[{"message":{"tool_calls":[{"id":"x","function":{"name":"f","arguments":"[1"}}]},"finish_reason":"tool_calls"}]}`,
		`not json`,
		// One reading of the wire (issue 27): a case variant is not "f"
		// to the checks and "EVIL" to the client; it is refused.
		`{"id":"c","model":"m","choices":[{"message":{"tool_calls":[{"id":"x","type":"function","function":{"name":"f","Name":"EVIL","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"id":"c","model":"m","choices":[{"message":{"Content":"EVIL","content":"ok"},"finish_reason":"stop"}]}`,
		`{"id":"c","model":"m","choices":[{"message":{"content":"x"},"finish_reason":"tool_calls"}]}`,
		`{"id":"c","model":"m","choices":[{"message":{"content":"x"},"finish_reason":"stop"},{"message":{"content":"y"},"finish_reason":"stop"}]}`,
	} {
		if _, err := FromChat([]byte(bad)); custody.CodeOf(err) != custody.CodeUpstreamErrorAsSuccess {
			t.Errorf("FromChat(%s) = %v, want upstream_error_as_success", bad, err)
		}
	}
}

// events splits an SSE transcript into (type, data) pairs, checking that
// each event's name is its data's type.
func events(t *testing.T, sse []byte) (names []string, datas [][]byte) {
	t.Helper()
	for _, ev := range bytes.Split(bytes.TrimSpace(sse), []byte("\n\n")) {
		lines := strings.Split(string(ev), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("malformed event %q", ev)
		}
		name, data := strings.TrimPrefix(lines[0], "event: "), []byte(strings.TrimPrefix(lines[1], "data: "))
		var typ struct{ Type string }
		if json.Unmarshal(data, &typ) != nil || typ.Type != name {
			t.Fatalf("event %s has data type %q", name, typ.Type)
		}
		names, datas = append(names, name), append(datas, data)
	}
	return
}

func translate(t *testing.T, chunks ...string) []byte {
	t.Helper()
	var tr StreamTranslator
	var out []byte
	for _, c := range chunks {
		b, err := tr.Chunk([]byte(c))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	b, err := tr.End()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, b...)
}

func TestStreamTranslator(t *testing.T) {
	sse := translate(t,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Let "}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"me."}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"name":"now","arguments":"{}"}}]}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"c1","model":"m","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":11,"prompt_tokens_details":{"cached_tokens":16}}}`,
	)
	names, datas := events(t, sse)
	want := []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v\nwant   %v", names, want)
	}
	jsonEqual(t, datas[0], `{"type":"message_start","message":{"id":"msg_c1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`)
	jsonEqual(t, datas[5], `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_1","name":"get_weather","input":{}}}`)
	jsonEqual(t, datas[6], `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`)
	jsonEqual(t, datas[12], `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":14,"output_tokens":11,"cache_read_input_tokens":16}}`)

	// The translation passes custody's own validator.
	var v StreamValidator
	for _, d := range datas {
		if err := v.Event(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.End(); err != nil {
		t.Fatal(err)
	}
	if v.ID != "msg_c1" || v.Model != "m" || v.StopReason != StopToolUse || v.Usage.Prompt() != 30 || v.Usage.OutputTokens != 11 {
		t.Errorf("validator read %+v", v)
	}
}

// TestStreamTranslatorThinking: reasoning deltas are a thinking block
// (thinking_delta events, signature ""), closed when the text begins.
func TestStreamTranslatorThinking(t *testing.T) {
	sse := translate(t,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"Think "}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hard."}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi."}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":3}}`,
	)
	names, datas := events(t, sse)
	want := []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v\nwant   %v", names, want)
	}
	jsonEqual(t, datas[1], `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
	jsonEqual(t, datas[2], `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Think "}}`)
	jsonEqual(t, datas[5], `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
	var v StreamValidator
	for _, d := range datas {
		if err := v.Event(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.End(); err != nil {
		t.Fatal(err)
	}
}

func TestStreamTranslatorRefuses(t *testing.T) {
	var tr StreamTranslator
	if _, err := tr.Chunk([]byte(`{"id":"c","model":"m","choices":[{"delta":{"content":"x"},"finish_reason":"abort"}]}`)); err == nil {
		t.Error("an aborted stream was translated")
	}
	var tr2 StreamTranslator
	if _, err := tr2.Chunk([]byte(`{"id":"c","model":"m","choices":[{"delta":{"content":"x"}}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := tr2.End(); err == nil {
		t.Error("a stream without finish_reason was completed")
	}
}

// BenchmarkStreamTranslator: a text answer's stream of 50 chunks, as the
// Messages front translates it from the chat upstream, per stream.
func BenchmarkStreamTranslator(b *testing.B) {
	chunks := [][]byte{[]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"sim-1","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)}
	for i := range 48 {
		chunks = append(chunks, []byte(fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"sim-1","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":" word%d"},"finish_reason":null}]}`, i)))
	}
	chunks = append(chunks, []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"sim-1","system_fingerprint":"fp","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":48}}`))
	openaitest.BenchmarkStreamTranslator(b, chunks, func() openaitest.StreamTranslator { return new(StreamTranslator) })
}
