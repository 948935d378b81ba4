package template

import (
	"strings"
	"testing"
)

// TestBuiltinChatML renders the simulator's template through both
// engines: plain turns, tools, a tool-call round trip.
func TestBuiltinChatML(t *testing.T) {
	tmpl, err := Builtin(BuiltinChatML)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		want       string
	}{
		{"single", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
		{"system", `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
			"<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
		{"tools", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
			"<|im_start|>system\nTools you may call, one JSON object a line:\n" +
				`{"type": "function", "function": {"name": "f", "description": "", "parameters": {"type": "object"}}}` + "\n" +
				"To call one, answer <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
		{"tool round trip", `{"model":"m","messages":[{"role":"user","content":"weather?"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"w","arguments":"{\"city\":  \"Paris\"}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`,
			"<|im_start|>user\nweather?<|im_end|>\n<|im_start|>assistant\n<tool_call>{\"name\": \"w\", \"arguments\": {\"city\": \"Paris\"}}</tool_call><|im_end|>\n" +
				"<|im_start|>tool\nsunny<|im_end|>\n<|im_start|>assistant\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tmpl.Render(EngineLlamaCpp, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if p.Text != tt.want {
				t.Errorf("llamacpp:\n got %q\nwant %q", p.Text, tt.want)
			}
			if _, err := tmpl.Render(EngineVLLM, []byte(tt.body)); err != nil {
				t.Errorf("vllm: %v", err)
			}
		})
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "chatml") {
		t.Errorf("unknown builtin: %v", err)
	}
}
