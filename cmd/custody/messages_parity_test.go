package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// messageView is what a Messages client reads from an answer, without the
// ids a server picks (message and tool_use ids) and with the prompt's
// tokens as a whole (how much of it a server's prefix cache held is its
// own history).
type messageView struct {
	Model      string
	Blocks     []string // "text:<text>" or "tool_use:<name>:<input>"
	StopReason string
	Prompt     int
	Output     int
	Events     []string // a stream's event types (block and delta types included)
}

func viewOfMessage(t *testing.T, body string) messageView {
	t.Helper()
	var m struct {
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
			CacheRead    int `json:"cache_read_input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	v := messageView{Model: m.Model, StopReason: m.StopReason, Prompt: m.Usage.InputTokens + m.Usage.CacheRead, Output: m.Usage.OutputTokens}
	for _, b := range m.Content {
		if b.Type == "text" {
			v.Blocks = append(v.Blocks, "text:"+b.Text)
		} else {
			v.Blocks = append(v.Blocks, "tool_use:"+b.Name+":"+string(b.Input))
		}
	}
	return v
}

func viewOfStream(t *testing.T, body string) messageView {
	t.Helper()
	var v messageView
	var text, input strings.Builder
	for _, line := range sseLines(body) {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Model string `json:"model"`
			} `json:"message"`
			ContentBlock struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage struct {
				InputTokens  int `json:"input_tokens"`
				OutputTokens int `json:"output_tokens"`
				CacheRead    int `json:"cache_read_input_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		ev := e.Type
		switch e.Type {
		case "message_start":
			v.Model = e.Message.Model
		case "content_block_start":
			ev += ":" + e.ContentBlock.Type
			text.Reset()
			input.Reset()
			if e.ContentBlock.Type == "tool_use" {
				input.WriteString(e.ContentBlock.Name + ":")
			}
		case "content_block_delta":
			ev += ":" + e.Delta.Type
			text.WriteString(e.Delta.Text)
			input.WriteString(e.Delta.PartialJSON)
		case "content_block_stop":
			if input.Len() > 0 {
				v.Blocks = append(v.Blocks, "tool_use:"+input.String())
			} else {
				v.Blocks = append(v.Blocks, "text:"+text.String())
			}
		case "message_delta":
			v.StopReason, v.Output = e.Delta.StopReason, e.Usage.OutputTokens
			v.Prompt = e.Usage.InputTokens + e.Usage.CacheRead
		}
		v.Events = append(v.Events, ev)
	}
	return v
}

type leafView struct {
	Endpoint      string   `json:"endpoint"`
	FallbackChain []string `json:"fallback_chain"`
}

// receiptLeaf decodes the leaf of a receipt (base64 JSON).
func receiptLeaf(t *testing.T, receipt string) leafView {
	t.Helper()
	var r struct {
		Leaf []byte `json:"leaf"`
	}
	var l leafView
	if err := json.Unmarshal([]byte(receipt), &r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.Leaf, &l); err != nil {
		t.Fatalf("%v: %s", err, r.Leaf)
	}
	return l
}

// TestMessagesTranslationParity: a Messages client in front of a chat
// provider gets what it gets from a Messages upstream (the same toy
// model behind both): content, tool calls, stop reasons, usage, and the
// same sequence of stream events, for text, system prompts, tools and a
// tool_result round trip. Then the fallback chain, the receipt's
// endpoint, and strict members on the Messages front.
func TestMessagesTranslationParity(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := dialectServe(t)
	tools := `[{"name":"get_weather","description":"Weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}]`
	user := `{"role":"user","content":"What is the weather in Paris today?"}`
	for _, tc := range []struct{ name, members string }{
		{"text", `"max_tokens":40,"messages":[` + user + `]`},
		{"short: max_tokens", `"max_tokens":3,"messages":[` + user + `]`},
		{"system", `"max_tokens":40,"system":[{"type":"text","text":"You are a weather bot."},{"type":"text","text":"Answer briefly."}],"messages":[` + user + `]`},
		{"stop sequences and sampling", `"max_tokens":40,"temperature":0,"top_k":5,"stop_sequences":["zzz"],"messages":[` + user + `]`},
		{"tool call", `"max_tokens":40,"tools":` + tools + `,"tool_choice":{"type":"tool","name":"get_weather"},"messages":[` + user + `]`},
		{"tool result", `"max_tokens":40,"tools":` + tools + `,"messages":[` + user + `,
			{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny, 21C"},{"type":"text","text":"And tomorrow?"}]}]`},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				views := map[string]messageView{}
				for _, model := range []string{"translated", "messages"} {
					resp, body := post(t, s.URL+"/v1/messages", "sk-acme", fmt.Sprintf(`{"model":%q,"stream":%v,%s}`, model, stream, tc.members))
					if resp.StatusCode != 200 {
						t.Fatalf("%s: %d %s", model, resp.StatusCode, body)
					}
					if stream {
						if !strings.Contains(body, ": custody-verdict verified") {
							t.Errorf("%s: stream not verified: %.600s", model, body)
						}
						views[model] = viewOfStream(t, body)
					} else {
						verified(t, model, resp.Header)
						views[model] = viewOfMessage(t, body)
					}
				}
				tr, up := views["translated"], views["messages"]
				if !reflect.DeepEqual(tr, up) {
					t.Errorf("translated:\n  %+v\nMessages upstream:\n  %+v", tr, up)
				}
				if len(tr.Blocks) == 0 || tr.Prompt == 0 || tr.Output == 0 || tr.StopReason == "" {
					t.Errorf("empty answer: %+v", tr)
				}
			})
		}
	}

	t.Run("fallback and receipt", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			resp, body := post(t, s.URL+"/v1/messages", "sk-acme", messagesReq("fallback", "hello after a fallback", stream))
			if resp.StatusCode != 200 || resp.Header.Get("Custody-Fallback") != "broken>sim" || resp.Header.Get("Custody-Provider") != "sim" {
				t.Fatalf("fallback: %d %q %q %.300s", resp.StatusCode, resp.Header.Get("Custody-Fallback"), resp.Header.Get("Custody-Provider"), body)
			}
			if leaf := receiptLeaf(t, fetchReceipt(t, s, "sk-acme", resp.Header.Get("Custody-Request-Id"))); leaf.Endpoint != "messages" ||
				!reflect.DeepEqual(leaf.FallbackChain, []string{"broken", "sim"}) {
				t.Errorf("leaf: %+v", leaf)
			}
		}
		resp, _ := post(t, s.URL+"/v1/responses", "sk-acme", responsesReq("translated", "hello", false))
		if leaf := receiptLeaf(t, fetchReceipt(t, s, "sk-acme", resp.Header.Get("Custody-Request-Id"))); leaf.Endpoint != "responses" {
			t.Errorf("leaf: %+v", leaf)
		}
	})

	t.Run("strict members and errors", func(t *testing.T) {
		for _, body := range []string{
			`{"model":"translated","model":"messages","max_tokens":8,"messages":[` + user + `]}`,
			`{"model":"translated","Model":"messages","max_tokens":8,"messages":[` + user + `]}`,
			`{"model":"translated","max_tokens":8,"messages":[{"role":"user","role":"assistant","content":"x"}]}`,
		} {
			resp, out := post(t, s.URL+"/v1/messages", "sk-acme", body)
			var e struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			if resp.StatusCode != 400 || json.Unmarshal([]byte(out), &e) != nil || e.Type != "error" ||
				e.Error.Type != "invalid_request_error" || !strings.HasPrefix(e.Error.Message, "invalid_request: ") || resp.Header.Get("Custody-Request-Id") == "" {
				t.Errorf("%s: %d %s", body, resp.StatusCode, out)
			}
		}
		// Anthropic's clients send their key as x-api-key.
		if resp, out := do(t, "POST", s.URL+"/v1/messages", "", strings.NewReader(messagesReq("translated", "hi", false)), "X-Api-Key", "sk-acme"); resp.StatusCode != 200 {
			t.Errorf("x-api-key: %d %s", resp.StatusCode, out)
		}
		if resp, _ := do(t, "POST", s.URL+"/v1/messages", "", strings.NewReader(messagesReq("translated", "hi", false)), "X-Api-Key", "sk-wrong"); resp.StatusCode != 401 {
			t.Errorf("a wrong x-api-key: %d", resp.StatusCode)
		}
		resp, out := post(t, s.URL+"/v1/messages", "sk-acme", `{"model":"translated","max_tokens":8,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[`+user+`]}`)
		if resp.StatusCode != 400 || !strings.Contains(out, "param: thinking") {
			t.Errorf("thinking on a translated route: %d %s", resp.StatusCode, out)
		}
		resp, out = post(t, s.URL+"/v1/responses/input_tokens", "sk-acme", `{"model":"responses","input":"What is the weather in Paris today?"}`)
		if resp.StatusCode != 200 || !strings.Contains(out, `"input_tokens":`) {
			t.Errorf("input_tokens: %d %s", resp.StatusCode, out)
		}
		resp, out = post(t, s.URL+"/v1/messages/count_tokens", "sk-acme", `{"model":"claude","messages":[`+user+`]}`)
		if resp.StatusCode != 200 || !strings.Contains(out, `"input_tokens":`) || resp.Header.Get("Custody-Provider") != "claude" {
			t.Errorf("count_tokens forwarded: %d %s", resp.StatusCode, out)
		}
		resp, out = get(t, s.URL+"/v1/models/translated", "sk-acme")
		if resp.StatusCode != 200 || !strings.Contains(out, `"id":"translated"`) {
			t.Errorf("GET /v1/models/translated: %d %s", resp.StatusCode, out)
		}
		if resp, _ := get(t, s.URL+"/v1/models/nope", "sk-acme"); resp.StatusCode != 404 {
			t.Errorf("GET /v1/models/nope: %d", resp.StatusCode)
		}
	})
}
