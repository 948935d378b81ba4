package anthropic

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

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
		{"not json", `{"model":`, ""},
		{"not an object", `[1]`, ""},
		{"bad utf8", "{\"model\":\"\xff\"}", ""},
		{"no model", `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
		{"no messages", `{"model":"m","max_tokens":5}`, "messages"},
		{"empty messages", `{"model":"m","max_tokens":5,"messages":[]}`, "messages"},
		{"bad role", `{"model":"m","max_tokens":5,"messages":[{"role":"tool","content":"hi"}]}`, "messages[0].role"},
		{"image in a system message", `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":[{"type":"image","source":{"type":"url","url":"http://x"}}]}]}`, "messages[0].content[0].type"},
		{"case variant of a thinking member", `{"model":"m","max_tokens":5,"thinking":{"type":"disabled","Type":"enabled"},"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"case variant of a tool's defer_loading", `{"model":"m","max_tokens":5,"tools":[{"name":"f","defer_loading":true,"Defer_loading":false}],"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"duplicate model", `{"model":"m","model":"n","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"case variant", `{"model":"m","Model":"n","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"escaped key", `{"mod\u0065l":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"duplicate role", `{"model":"m","max_tokens":5,"messages":[{"role":"user","role":"assistant","content":"hi"}]}`, ""},
		{"duplicate block text", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]}`, ""},
		{"tool_use without input", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f"}]}]}`, "messages[0].content[0].input"},
		{"block without type", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"text":"a"}]}]}`, "messages[0].content[0].type"},
		{"bad tool_choice", `{"model":"m","max_tokens":5,"tool_choice":{"type":"sometimes"},"messages":[{"role":"user","content":"hi"}]}`, "tool_choice.type"},
		{"stream of wrong type", `{"model":"m","max_tokens":5,"stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "stream"},
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

func TestParseCountTokens(t *testing.T) {
	r, err := ParseCountTokens([]byte(`{"model":"m","system":"be brief","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "m" || len(r.System) != 1 || r.System[0].Text != "be brief" {
		t.Errorf("parsed %+v", r)
	}
	if _, err := ParseCountTokens([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)); err == nil {
		t.Error("a streamed count_tokens was accepted")
	}
}

// chatOf translates body and decodes the chat request it gives.
func chatOf(t *testing.T, body string) map[string]any {
	t.Helper()
	r, err := ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.ToChat()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestToChat(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"text", `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":"hi"}]}`,
			`{"max_tokens":7,"messages":[{"content":"hi","role":"user"}],"model":"m"}`},
		{"system string and blocks, sampling, stop, user",
			`{"model":"m","max_tokens":7,"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}],
			  "temperature":0.5,"top_p":0.9,"top_k":4,"stop_sequences":["END"],"metadata":{"user_id":"u1"},
			  "messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]}`,
			`{"max_tokens":7,"messages":[{"content":"ab","role":"system"},{"content":[{"text":"x","type":"text"},{"text":"y","type":"text"}],"role":"user"}],
			  "model":"m","stop":["END"],"temperature":0.5,"top_k":4,"top_p":0.9,"user":"u1"}`},
		{"tools with a tool_result round trip",
			`{"model":"m","max_tokens":7,"stream":true,
			  "tools":[{"name":"get_weather","description":"d","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
			  "tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true},
			  "messages":[{"role":"user","content":"weather?"},
			   {"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city": "Paris"}}]},
			   {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"},{"type":"text","text":"and tomorrow?"}]}]}`,
			`{"max_tokens":7,"model":"m","stream":true,"stream_options":{"include_usage":true},"parallel_tool_calls":false,
			  "tool_choice":{"function":{"name":"get_weather"},"type":"function"},
			  "tools":[{"function":{"description":"d","name":"get_weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}},"type":"function"}],
			  "messages":[{"content":"weather?","role":"user"},
			   {"content":"Let me look.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"toolu_1","type":"function"}]},
			   {"content":"sunny","role":"tool","tool_call_id":"toolu_1"},
			   {"content":"and tomorrow?","role":"user"}]}`},
		{"tool_result blocks only, any",
			`{"model":"m","max_tokens":7,"tool_choice":{"type":"any"},"tools":[{"name":"f"}],"messages":[
			   {"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{"x":1}}]},
			   {"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"1"},{"type":"text","text":"2"}]},{"type":"tool_result","tool_use_id":"b"}]}]}`,
			`{"max_tokens":7,"model":"m","tool_choice":"required",
			  "tools":[{"function":{"name":"f","parameters":{"properties":{},"type":"object"}},"type":"function"}],
			  "messages":[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"a","type":"function"},{"function":{"arguments":"{\"x\":1}","name":"f"},"id":"b","type":"function"}]},
			   {"content":"1\n2","role":"tool","tool_call_id":"a"},{"content":"","role":"tool","tool_call_id":"b"}]}`},
		{"image",
			`{"model":"m","max_tokens":7,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"what?"}]}]}`,
			`{"max_tokens":7,"model":"m","messages":[{"content":[{"image_url":{"url":"data:image/png;base64,AAAA"},"type":"image_url"},{"text":"what?","type":"text"}],"role":"user"}]}`},
		{"thinking disabled, tool_choice none",
			`{"model":"m","max_tokens":7,"thinking":{"type":"disabled"},"tool_choice":{"type":"none"},"messages":[{"role":"user","content":"hi"}]}`,
			`{"chat_template_kwargs":{"enable_thinking":false},"max_tokens":7,"model":"m","tool_choice":"none","messages":[{"content":"hi","role":"user"}]}`},
		// What Claude Code sends on every turn (TestAgentsClaudeCode).
		{"agent controls",
			`{"model":"m","max_tokens":7,"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"high"},
			  "context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},"service_tier":"auto",
			  "thread":{"type":"create"},
			  "tools":[{"name":"Read","input_schema":{"type":"object"}},{"name":"Later","input_schema":{"type":"object"},"defer_loading":true}],
			  "messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"read it"}]},
			   {"role":"system","content":[{"type":"text","text":"env"}]},
			   {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},
			   {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"no such file"}]}]}`,
			`{"chat_template_kwargs":{"enable_thinking":true},"reasoning_effort":"high","service_tier":"auto","max_tokens":7,"model":"m",
			  "tools":[{"function":{"name":"Read","parameters":{"type":"object"}},"type":"function"}],
			  "messages":[{"content":[{"text":"","type":"text"},{"text":"read it","type":"text"}],"role":"user"},
			   {"content":"env","role":"system"},
			   {"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"Read"},"id":"t1","type":"function"}]},
			   {"content":"Error:\nno such file","role":"tool","tool_call_id":"t1"}]}`},
		// Thinking blocks of earlier turns go back as the assistant
		// message's reasoning_content, their signatures (which only
		// Anthropic can check) left out.
		{"thinking in history",
			`{"model":"m","max_tokens":7,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"},
			   {"role":"assistant","content":[{"type":"thinking","thinking":"Greet ","signature":""},{"type":"thinking","thinking":"back.","signature":"c2ln"},{"type":"text","text":"Hello."},{"type":"tool_use","id":"t1","name":"f","input":{}}]},
			   {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}`,
			`{"chat_template_kwargs":{"enable_thinking":true},"max_tokens":7,"model":"m",
			  "messages":[{"content":"hi","role":"user"},
			   {"content":"Hello.","reasoning_content":"Greet back.","role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"t1","type":"function"}]},
			   {"content":"x","role":"tool","tool_call_id":"t1"}]}`},
		// clear_thinking keeps the thinking of the last keep turns: the
		// earlier turns' reasoning is not sent.
		{"clear_thinking keeps the last turn's",
			`{"model":"m","max_tokens":7,"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":1}}]},
			  "messages":[{"role":"user","content":"a"},
			   {"role":"assistant","content":[{"type":"thinking","thinking":"old","signature":""},{"type":"text","text":"b"}]},
			   {"role":"user","content":"c"},
			   {"role":"assistant","content":[{"type":"thinking","thinking":"new","signature":""},{"type":"text","text":"d"}]},
			   {"role":"user","content":"e"}]}`,
			`{"max_tokens":7,"model":"m",
			  "messages":[{"content":"a","role":"user"},{"content":"b","role":"assistant"},{"content":"c","role":"user"},
			   {"content":"d","reasoning_content":"new","role":"assistant"},{"content":"e","role":"user"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := chatOf(t, tc.body)
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func TestToChatRefusesWhatItCannotCarry(t *testing.T) {
	msg := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct{ name, body, param string }{
		{"thinking budget", `{"model":"m","max_tokens":7,"thinking":{"type":"enabled","budget_tokens":1024},` + msg + `}`, "thinking.budget_tokens"},
		{"unknown top-level member", `{"model":"m","max_tokens":7,"container":"c1",` + msg + `}`, "container"},
		{"effort chat cannot say", `{"model":"m","max_tokens":7,"output_config":{"effort":"max"},` + msg + `}`, "output_config.effort"},
		{"structured output", `{"model":"m","max_tokens":7,"output_config":{"format":{"type":"json_schema"}},` + msg + `}`, "output_config.format"},
		{"clearing tool results", `{"model":"m","max_tokens":7,"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]}`, "context_management.edits[0]"},
		{"server tool", `{"model":"m","max_tokens":7,"tools":[{"type":"web_search_20250305","name":"web_search"}],` + msg + `}`, "tools[0].type"},
		{"redacted thinking block", `{"model":"m","max_tokens":7,"messages":[{"role":"assistant","content":[{"type":"redacted_thinking","data":"x"}]}]}`, "messages[0].content[0].data"},
		{"thinking in a user turn", `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":[{"type":"thinking","thinking":"x","signature":""}]}]}`, "messages[0].content[0]"},
		{"document block", `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"}}]}]}`, "messages[0].content[0].type"},
		{"citations", `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":[{"type":"text","text":"x","citations":[]}]}]}`, "messages[0].content[0].citations"},
		{"image in tool_result", `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"http://x"}}]}]}]}`, "messages[0].content[0].content[0]"},
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
				t.Errorf("code %s param %q, want invalid_request %q", code, param, tc.param)
			}
			if !strings.Contains(err.Error(), tc.param) {
				t.Errorf("message %q does not name %s", err, tc.param)
			}
		})
	}
}
