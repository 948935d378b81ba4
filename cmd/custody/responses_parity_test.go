package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// responseView is what a Responses client reads, without the ids a
// server picks.
type responseView struct {
	Model, Status string
	Items         []string // "message:<text>" or "function_call:<name>:<arguments>"
	Input, Output int
	Events        []string
}

type responseObject struct {
	Model  string `json:"model"`
	Status string `json:"status"`
	Output []struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func (o responseObject) view() responseView {
	v := responseView{Model: o.Model, Status: o.Status, Input: o.Usage.InputTokens, Output: o.Usage.OutputTokens}
	for _, it := range o.Output {
		if it.Type == "message" {
			text := ""
			for _, c := range it.Content {
				text += c.Text
			}
			v.Items = append(v.Items, "message:"+text)
		} else {
			v.Items = append(v.Items, it.Type+":"+it.Name+":"+it.Arguments)
		}
	}
	return v
}

// TestResponsesTranslationParity: a Responses client in front of a chat
// provider gets what a provider that speaks Responses gives (the same toy
// model behind both): output items, status, usage and the sequence of
// stream events, for text, instructions, a function call and its output.
func TestResponsesTranslationParity(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := dialectServe(t)
	tools := `[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	for _, tc := range []struct{ name, members string }{
		{"text", `"max_output_tokens":40,"input":"What is the weather in Paris today?"`},
		{"short: incomplete", `"max_output_tokens":3,"input":"What is the weather in Paris today?"`},
		{"instructions and items", `"max_output_tokens":40,"instructions":"You are a weather bot.","input":[{"role":"developer","content":"Answer briefly."},{"type":"message","role":"user","content":[{"type":"input_text","text":"What is the weather in Paris today?"}]}]`},
		{"function call", `"max_output_tokens":40,"tools":` + tools + `,"tool_choice":{"type":"function","name":"get_weather"},"input":"What is the weather in Paris today?"`},
		{"function output", `"max_output_tokens":40,"tools":` + tools + `,"input":[{"role":"user","content":"What is the weather in Paris today?"},
			{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
			{"type":"function_call_output","call_id":"call_1","output":"sunny, 21C"}]`},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				views := map[string]responseView{}
				for _, model := range []string{"translated", "responses"} {
					resp, body := post(t, s.URL+"/v1/responses", "sk-acme", fmt.Sprintf(`{"model":%q,"stream":%v,%s}`, model, stream, tc.members))
					if resp.StatusCode != 200 {
						t.Fatalf("%s: %d %s", model, resp.StatusCode, body)
					}
					if !stream {
						verified(t, model, resp.Header)
						var o responseObject
						if err := json.Unmarshal([]byte(body), &o); err != nil {
							t.Fatal(err)
						}
						views[model] = o.view()
						continue
					}
					if !strings.Contains(body, ": custody-verdict verified") {
						t.Errorf("%s: stream not verified: %.600s", model, body)
					}
					var v responseView
					var events []string
					for _, line := range sseLines(body) {
						data, ok := strings.CutPrefix(line, "data: ")
						if !ok {
							continue
						}
						var e struct {
							Type     string         `json:"type"`
							Response responseObject `json:"response"`
						}
						if err := json.Unmarshal([]byte(data), &e); err != nil {
							t.Fatal(err)
						}
						events = append(events, e.Type)
						if e.Type == "response.completed" || e.Type == "response.incomplete" {
							v = e.Response.view()
						}
					}
					v.Events = events
					views[model] = v
				}
				tr, up := views["translated"], views["responses"]
				if !reflect.DeepEqual(tr, up) {
					t.Errorf("translated:\n  %+v\nResponses upstream:\n  %+v", tr, up)
				}
				if len(tr.Items) == 0 || tr.Input == 0 || tr.Output == 0 || tr.Status == "" {
					t.Errorf("empty answer: %+v", tr)
				}
			})
		}
	}
}
