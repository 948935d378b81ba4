package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/responses"
)

// dialectReply is what custody's dialect packages read from a reply:
// the id, model, prompt tokens and text, or the code of what is wrong.
type dialectReply struct {
	status int
	id     string
	model  string
	prompt int
	text   string
	code   custody.Code
	raw    []byte
	header http.Header
}

// sseData is the data of each event of an SSE body.
func sseData(b []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

func messagesBody(stream bool, extra map[string]any, msgs ...string) map[string]any {
	var m []map[string]any
	for i, text := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m = append(m, map[string]any{"role": role, "content": text})
	}
	b := map[string]any{"model": "sim-1", "max_tokens": 16, "messages": m, "stream": stream}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func responsesBody(stream bool, extra map[string]any, input string) map[string]any {
	b := map[string]any{"model": "sim-1", "input": input, "stream": stream, "max_output_tokens": 16}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// ask posts a dialect request and reads the reply with custody's reader
// or validator of that dialect.
func ask(t *testing.T, ts interface{ Client() *http.Client }, url, path string, body map[string]any, headers ...string) dialectReply {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(raw))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	r := dialectReply{status: res.StatusCode, raw: buf.Bytes(), header: res.Header}
	if res.StatusCode != http.StatusOK {
		return r
	}
	stream, _ := body["stream"].(bool)
	switch {
	case path == "/v1/messages" && stream:
		var v anthropic.StreamValidator
		var text strings.Builder
		for _, d := range sseData(r.raw) {
			if err := v.Event(d); err != nil {
				r.code = custody.CodeOf(err)
				return r
			}
			var e struct {
				Delta struct{ Text string } `json:"delta"`
			}
			_ = json.Unmarshal(d, &e)
			text.WriteString(e.Delta.Text)
		}
		if err := v.End(); err != nil {
			r.code = custody.CodeOf(err)
		}
		r.id, r.model, r.prompt, r.text = v.ID, v.Model, v.Usage.Prompt(), text.String()
	case path == "/v1/messages":
		m, err := anthropic.ParseResponse(r.raw)
		if err == nil {
			err = m.Failure()
		}
		if err != nil {
			r.code = custody.CodeOf(err)
			return r
		}
		r.id, r.model, r.prompt, r.text = m.ID, m.Model, m.Usage.Prompt(), m.Text()
	case stream:
		var v responses.StreamValidator
		for _, d := range sseData(r.raw) {
			if err := v.Event(d); err != nil {
				r.code = custody.CodeOf(err)
				return r
			}
		}
		if err := v.End(); err != nil {
			r.code = custody.CodeOf(err)
			return r
		}
		r.id, r.model, r.prompt, r.text = v.ID, v.Model, v.Response.PromptTokens(), v.Response.Text()
	default:
		m, err := responses.ParseResponse(r.raw)
		if err == nil {
			err = m.Failure()
		}
		if err != nil {
			r.code = custody.CodeOf(err)
			return r
		}
		r.id, r.model, r.prompt, r.text = m.ID, m.Model, m.PromptTokens(), m.Text()
	}
	return r
}

// TestDialectsClean: both dialects, plain and streamed, answer what chat
// answers for the same conversation (text and prompt tokens), in bodies
// and streams that custody's readers and validators accept.
func TestDialectsClean(t *testing.T) {
	ts := newTestServer(t, Config{})
	words := "the quick brown fox jumps over the lazy dog"
	chat := post(t, ts, "/v1/chat/completions", map[string]any{"model": "sim-1", "max_tokens": 16,
		"messages": []map[string]any{{"role": "user", "content": words}}})
	if chat.status != http.StatusOK {
		t.Fatalf("chat: %d", chat.status)
	}
	count := ask(t, ts, ts.URL, "/v1/messages/count_tokens", map[string]any{"model": "sim-1",
		"messages": []map[string]any{{"role": "user", "content": words}}})
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.Unmarshal(count.raw, &ct); err != nil || ct.InputTokens != chat.resp.Usage.PromptTokens {
		t.Errorf("count_tokens %s, chat prompt_tokens %d", count.raw, chat.resp.Usage.PromptTokens)
	}
	it := ask(t, ts, ts.URL, "/v1/responses/input_tokens", map[string]any{"model": "sim-1", "input": words})
	if err := json.Unmarshal(it.raw, &ct); err != nil || ct.InputTokens != chat.resp.Usage.PromptTokens {
		t.Errorf("input_tokens %s, chat prompt_tokens %d", it.raw, chat.resp.Usage.PromptTokens)
	}
	for _, tc := range []struct {
		name, path string
		body       map[string]any
	}{
		{"messages", "/v1/messages", messagesBody(false, nil, words)},
		{"messages stream", "/v1/messages", messagesBody(true, nil, words)},
		{"responses", "/v1/responses", responsesBody(false, nil, words)},
		{"responses stream", "/v1/responses", responsesBody(true, nil, words)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ask(t, ts, ts.URL, tc.path, tc.body)
			if r.status != http.StatusOK || r.code != "" {
				t.Fatalf("status %d code %q: %s", r.status, r.code, r.raw)
			}
			if r.model != "sim-1" || r.text != chat.resp.text() || r.prompt != chat.resp.Usage.PromptTokens {
				t.Errorf("model %q text %q prompt %d; chat said %q %d", r.model, r.text, r.prompt, chat.resp.text(), chat.resp.Usage.PromptTokens)
			}
			prefix := map[string]string{"/v1/messages": "msg_", "/v1/responses": "resp_"}[tc.path]
			if !strings.HasPrefix(r.id, prefix) {
				t.Errorf("id %q", r.id)
			}
		})
	}
}

// TestDialectToolCall: a forced tool choice is answered with a call in
// every dialect, and the call's result round-trips.
func TestDialectToolCall(t *testing.T) {
	ts := newTestServer(t, Config{})
	tool := map[string]any{"name": "get_weather", "input_schema": map[string]any{"type": "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}}}
	r := post(t, ts, "/v1/messages", messagesBody(false, map[string]any{"tools": []any{tool},
		"tool_choice": map[string]any{"type": "tool", "name": "get_weather"}}, "weather in Paris?"))
	var m struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &m) != nil || m.StopReason != "tool_use" || len(m.Content) != 1 ||
		m.Content[0].Type != "tool_use" || m.Content[0].Name != "get_weather" {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var input struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	if err := json.Unmarshal(m.Content[0].Input, &input); err != nil || input.City == "" || input.Days == 0 {
		t.Errorf("input %s", m.Content[0].Input)
	}
	// The result goes back; the model answers in text.
	back := messagesBody(false, map[string]any{"tools": []any{tool}, "tool_choice": map[string]any{"type": "tool", "name": "get_weather"}})
	back["messages"] = []map[string]any{{"role": "user", "content": "weather in Paris?"},
		{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": m.Content[0].ID, "name": "get_weather", "input": m.Content[0].Input}}},
		{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": m.Content[0].ID, "content": "sunny"}}}}
	if a := ask(t, ts, ts.URL, "/v1/messages", back); a.status != 200 || a.code != "" || a.text == "" {
		t.Errorf("round trip: %d %q %s", a.status, a.code, a.raw)
	}
	// Streamed, in both dialects.
	s := ask(t, ts, ts.URL, "/v1/messages", messagesBody(true, map[string]any{"tools": []any{tool}, "tool_choice": map[string]any{"type": "any"}}, "weather?"))
	if s.code != "" || !bytes.Contains(s.raw, []byte(`"type":"input_json_delta"`)) || !bytes.Contains(s.raw, []byte(`"stop_reason":"tool_use"`)) {
		t.Errorf("messages stream: %q %s", s.code, s.raw)
	}
	fn := map[string]any{"type": "function", "name": "get_weather", "parameters": tool["input_schema"]}
	rs := ask(t, ts, ts.URL, "/v1/responses", responsesBody(true, map[string]any{"tools": []any{fn}, "tool_choice": "required"}, "weather?"))
	if rs.code != "" || !bytes.Contains(rs.raw, []byte(`response.function_call_arguments.done`)) {
		t.Errorf("responses stream: %q %s", rs.code, rs.raw)
	}
	rp := post(t, ts, "/v1/responses", responsesBody(false, map[string]any{"tools": []any{fn}, "tool_choice": "required"}, "weather?"))
	if !bytes.Contains(rp.body, []byte(`"type":"function_call"`)) {
		t.Errorf("responses: %s", rp.body)
	}
	// Chat itself answers a forced choice with tool_calls.
	cr := post(t, ts, "/v1/chat/completions", map[string]any{"model": "sim-1", "tool_choice": "required",
		"tools":    []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": tool["input_schema"]}}},
		"messages": []map[string]any{{"role": "user", "content": "weather?"}}})
	if cr.resp.finish() != "tool_calls" || !bytes.Contains(cr.body, []byte(`"tool_calls":[{`)) {
		t.Errorf("chat: %s", cr.body)
	}
}

// TestDialectFaults: every fault that applies to a dialect shows in it,
// as custody's reader, validator or a comparison sees it.
func TestDialectFaults(t *testing.T) {
	ts := newTestServer(t, Config{AllowFaultHeader: true})
	words := strings.Repeat("one two three four five six seven eight nine ten ", 6)
	honest := ask(t, ts, ts.URL, "/v1/messages", messagesBody(false, nil, words)).prompt
	for _, path := range []string{"/v1/messages", "/v1/responses"} {
		for _, stream := range []bool{false, true} {
			body := func() map[string]any {
				if path == "/v1/messages" {
					return messagesBody(stream, nil, words)
				}
				return responsesBody(stream, nil, words)
			}
			name := strings.TrimPrefix(path, "/v1/")
			if stream {
				name += " stream"
			}
			for _, tc := range []struct {
				fault string
				seen  func(prev, r dialectReply) bool
			}{
				{"silent-fallback", func(_, r dialectReply) bool { return r.code == "" && r.model == "sim-fallback-1" }},
				{"snapshot-drift", func(_, r dialectReply) bool { return r.code == "" && r.model == "sim-1-0901" }},
				{"placeholder-substitution", func(_, r dialectReply) bool { return r.code == "" && r.prompt < honest/2 }},
				{"truncate", func(_, r dialectReply) bool { return r.code == "" && r.prompt < honest }},
				{"duplicate-id", func(prev, r dialectReply) bool { return r.id == prev.id }},
				{"response-swap", func(prev, r dialectReply) bool { return bytes.Equal(r.raw, prev.raw) }},
				{"error-as-200:error-body", func(_, r dialectReply) bool { return r.code == custody.CodeUpstreamErrorAsSuccess }},
				{"error-as-200:empty-choices", func(_, r dialectReply) bool { return r.code == custody.CodeUpstreamErrorAsSuccess }},
				{"error-as-200:abort", func(_, r dialectReply) bool { return r.code == custody.CodeUpstreamErrorAsSuccess }},
				{"error-as-200:empty-length", func(_, r dialectReply) bool { return r.code == custody.CodeUpstreamErrorAsSuccess }},
				{"ambiguous-model", func(_, r dialectReply) bool { return r.code == custody.CodeResponseAmbiguous }},
				{"id-echo-mismatch", func(_, r dialectReply) bool { return r.header.Get("X-Request-Id") != "req-mine" }},
				{"stream-cut", func(_, r dialectReply) bool { return !stream || r.code == custody.CodeStreamTruncated }},
				{"stream-interleave", func(_, r dialectReply) bool { return !stream || r.code == custody.CodeStreamInconsistent }},
			} {
				t.Run(name+"/"+tc.fault, func(t *testing.T) {
					// prev is the answer before the fault: what a replay repeats.
					prev := ask(t, ts, ts.URL, path, body(), "X-Request-Id", "req-prev")
					r := ask(t, ts, ts.URL, path, body(), "X-Sim-Fault", tc.fault, "X-Request-Id", "req-mine")
					if r.status != http.StatusOK || !tc.seen(prev, r) {
						t.Errorf("%s not seen: status %d code %q id %q (before %q) model %q prompt %d (honest %d)\n%s",
							tc.fault, r.status, r.code, r.id, prev.id, r.model, r.prompt, honest, r.raw)
					}
					clean := ask(t, ts, ts.URL, path, body(), "X-Request-Id", "req-clean")
					if clean.code != "" || clean.model != "sim-1" || clean.prompt != honest {
						t.Errorf("clean after %s: code %q model %q prompt %d", tc.fault, clean.code, clean.model, clean.prompt)
					}
				})
			}
		}
	}
}

func TestDialectErrors(t *testing.T) {
	ts := newTestServer(t, Config{})
	r := post(t, ts, "/v1/messages", []byte(`{"model":"sim-1","messages":[{"role":"user","content":"hi"}]}`))
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if r.status != 400 || json.Unmarshal(r.body, &e) != nil || e.Type != "error" || e.Error.Type != "invalid_request_error" ||
		!strings.Contains(e.Error.Message, "max_tokens") {
		t.Errorf("messages without max_tokens: %d %s", r.status, r.body)
	}
	r = post(t, ts, "/v1/messages", messagesBody(false, map[string]any{"model": "nope"}, "hi"))
	if r.status != 404 || json.Unmarshal(r.body, &e) != nil || e.Error.Type != "not_found_error" {
		t.Errorf("unknown model: %d %s", r.status, r.body)
	}
	r = post(t, ts, "/v1/responses", responsesBody(false, map[string]any{"previous_response_id": "resp_x"}, "hi"))
	if r.status != 400 || r.resp.Error == nil || r.resp.Error.Code != "invalid_request" || !strings.Contains(string(r.body), `"param":"previous_response_id"`) {
		t.Errorf("previous_response_id: %d %s", r.status, r.body)
	}
}

// TestReasoning: asked to think (enable_thinking, reasoning_effort, a
// Messages thinking or a Responses reasoning.effort), the simulator's
// answer carries reasoning, plain and streamed, counted in the
// completion tokens; not asked, it carries none.
func TestReasoning(t *testing.T) {
	ts := newTestServer(t, Config{})
	think := map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": true}}
	body := chatBody("sim-1", false, "hello there")
	for k, v := range think {
		body[k] = v
	}
	r := post(t, ts, "/v1/chat/completions", body)
	var plain struct {
		Choices []struct {
			Message struct {
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(r.body, &plain); err != nil || len(plain.Choices) != 1 {
		t.Fatalf("%v: %s", err, r.body)
	}
	if got := plain.Choices[0].Message.ReasoningContent; got != strings.Join(simReasoning, " ") {
		t.Errorf("chat reasoning_content %q", got)
	}
	off := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, "hello there"))
	if bytes.Contains(off.body, []byte("reasoning_content")) {
		t.Errorf("reasoning without being asked: %s", off.body)
	}
	var offUsage struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(off.body, &offUsage)
	if plain.Usage.CompletionTokens != offUsage.Usage.CompletionTokens+len(simReasoning) {
		t.Errorf("completion tokens %d with reasoning, %d without", plain.Usage.CompletionTokens, offUsage.Usage.CompletionTokens)
	}
	body["stream"] = true
	s := post(t, ts, "/v1/chat/completions", body)
	if !bytes.Contains(s.body, []byte(`"reasoning_content":"Reading"`)) {
		t.Errorf("chat stream without reasoning: %s", s.body)
	}

	m := post(t, ts, "/v1/messages", messagesBody(false, map[string]any{"thinking": map[string]any{"type": "adaptive"}}, "hello there"))
	if !bytes.Contains(m.body, []byte(`{"type":"thinking","thinking":"Reading the request, then answering.","signature":""}`)) {
		t.Errorf("Messages answer without a thinking block: %s", m.body)
	}
	ms := post(t, ts, "/v1/messages", messagesBody(true, map[string]any{"thinking": map[string]any{"type": "adaptive"}}, "hello there"))
	if !bytes.Contains(ms.body, []byte(`"type":"thinking_delta"`)) {
		t.Errorf("Messages stream without thinking: %s", ms.body)
	}
	rs := post(t, ts, "/v1/responses", responsesBody(false, map[string]any{"reasoning": map[string]any{"effort": "low"}}, "hello there"))
	if !bytes.Contains(rs.body, []byte(`"type":"reasoning"`)) {
		t.Errorf("Response without a reasoning item: %s", rs.body)
	}
}

// tool-arguments-invalid on the Messages wire: a tool_use whose input is
// an object missing the schema's required property, plain and streamed
// (a tool_use input cannot be a fragment of JSON there).
func TestMessagesToolArgumentsInvalid(t *testing.T) {
	ts := newTestServer(t, Config{Models: []string{"sim-1"}, Faults: []Fault{FaultToolArgumentsInvalid}})
	tools := []any{map[string]any{"name": "weather", "input_schema": map[string]any{"type": "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}}
	for _, stream := range []bool{false, true} {
		r := post(t, ts, "/v1/messages", messagesBody(stream, map[string]any{"tools": tools}, "what is the weather"))
		if r.status != 200 {
			t.Fatalf("stream=%v: %d %s", stream, r.status, r.body)
		}
		if !strings.Contains(string(r.body), `"name":"weather"`) {
			t.Fatalf("stream=%v: no call of the declared tool:\n%s", stream, r.body)
		}
		var input string
		if !stream {
			var m struct {
				Content []struct {
					Input json.RawMessage `json:"input"`
				} `json:"content"`
			}
			_ = json.Unmarshal(r.body, &m)
			for _, b := range m.Content {
				input += string(b.Input)
			}
		}
		for _, d := range sseData(r.body) {
			var e struct {
				Delta struct {
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			_ = json.Unmarshal(d, &e)
			input += e.Delta.PartialJSON
		}
		if input != messagesBrokenInput {
			t.Errorf("stream=%v: the input is %s:\n%s", stream, input, r.body)
		}
	}
}

// finish-tool-calls-empty on the Messages wire: stop_reason tool_use with
// no tool_use block, plain and streamed.
func TestMessagesFinishToolCallsEmpty(t *testing.T) {
	ts := newTestServer(t, Config{Models: []string{"sim-1"}, Faults: []Fault{FaultFinishToolCallsEmpty}})
	tools := []any{map[string]any{"name": "weather", "input_schema": map[string]any{"type": "object"}}}
	for _, stream := range []bool{false, true} {
		r := post(t, ts, "/v1/messages", messagesBody(stream, map[string]any{"tools": tools}, "what is the weather"))
		if r.status != 200 {
			t.Fatalf("stream=%v: %d %s", stream, r.status, r.body)
		}
		if !strings.Contains(string(r.body), `"stop_reason":"tool_use"`) || strings.Contains(string(r.body), `"tool_use","id"`) ||
			strings.Contains(string(r.body), `"type":"tool_use"`) {
			t.Errorf("stream=%v: want stop_reason tool_use without a block:\n%s", stream, r.body)
		}
	}
}
