package check

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

const weatherTool = `{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
const strictTool = `{"type":"function","function":{"name":"book","strict":true,"parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}}}`

// call is a chat completion choice with tool calls.
func call(finish string, calls ...[2]string) string {
	var tcs []string
	for i, c := range calls {
		a, _ := json.Marshal(c[1])
		tcs = append(tcs, `{"index":`+itoa(i)+`,"id":"c`+itoa(i)+`","type":"function","function":{"name":"`+c[0]+`","arguments":`+string(a)+`}}`)
	}
	return `{"index":0,"finish_reason":"` + finish + `","message":{"role":"assistant","content":null,"tool_calls":[` + strings.Join(tcs, ",") + `]}}`
}

func text(finish, content string) string {
	c, _ := json.Marshal(content)
	return `{"index":0,"finish_reason":"` + finish + `","message":{"role":"assistant","content":` + string(c) + `}}`
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func completion(completionTokens int, choices ...string) string {
	return `{"id":"x","object":"chat.completion","model":"m","choices":[` + strings.Join(choices, ",") +
		`],"usage":{"prompt_tokens":5,"completion_tokens":` + itoa(completionTokens) + `,"total_tokens":9}}`
}

var contractCases = []struct {
	name, request, response string
	want                    []custody.Code
	stack                   bool // the first violation is a broken stack's
}{
	{"plain text, nothing asked", `{}`, completion(3, text("stop", "hi")), nil, false},
	{"declared call", `{"tools":[` + weatherTool + `]}`, completion(3, call("tool_calls", [2]string{"weather", `{"city":"Oslo"}`})), nil, false},
	{"undeclared tool", `{"tools":[` + weatherTool + `]}`, completion(3, call("tool_calls", [2]string{"rm_rf", `{}`})), []custody.Code{custody.CodeContractToolUnknown}, true},
	{"call without tools", `{}`, completion(3, call("tool_calls", [2]string{"weather", `{"city":"Oslo"}`})), []custody.Code{custody.CodeContractToolUnknown}, true},
	{"arguments not JSON", `{"tools":[` + weatherTool + `]}`, completion(3, call("tool_calls", [2]string{"weather", `{"city": Oslo`})), []custody.Code{custody.CodeContractArgumentsInvalid}, false},
	{"arguments an array", `{"tools":[` + weatherTool + `]}`, completion(3, call("tool_calls", [2]string{"weather", `["Oslo"]`})), []custody.Code{custody.CodeContractArgumentsInvalid}, false},
	{"arguments miss required", `{"tools":[` + weatherTool + `]}`, completion(3, call("tool_calls", [2]string{"weather", `{"town":"Oslo"}`})), []custody.Code{custody.CodeContractArgumentsInvalid}, false},
	{"strict schema broken", `{"tools":[` + strictTool + `]}`, completion(3, call("tool_calls", [2]string{"book", `{"n":"two"}`})), []custody.Code{custody.CodeContractSchemaInvalid}, true},
	{"strict arguments not JSON", `{"tools":[` + strictTool + `]}`, completion(3, call("tool_calls", [2]string{"book", `n=2`})), []custody.Code{custody.CodeContractSchemaInvalid}, true},
	{"empty arguments are {}", `{"tools":[{"type":"function","function":{"name":"now"}}]}`, completion(3, call("tool_calls", [2]string{"now", ``})), nil, false},
	{"truncated arguments not judged", `{"tools":[` + weatherTool + `]}`, completion(3, call("length", [2]string{"weather", `{"ci`})), nil, false},
	{"tool_choice none ignored", `{"tools":[` + weatherTool + `],"tool_choice":"none"}`, completion(3, call("tool_calls", [2]string{"weather", `{"city":"Oslo"}`})), []custody.Code{custody.CodeContractToolChoiceIgnored}, true},
	{"tool_choice required ignored", `{"tools":[` + weatherTool + `],"tool_choice":"required"}`, completion(3, text("stop", "no")), []custody.Code{custody.CodeContractToolChoiceIgnored}, true},
	{"tool_choice named other tool", `{"tools":[` + weatherTool + `,` + strictTool + `],"tool_choice":{"type":"function","function":{"name":"book"}}}`,
		completion(3, call("stop", [2]string{"weather", `{"city":"Oslo"}`})), []custody.Code{custody.CodeContractToolChoiceIgnored}, true},
	{"tool_choice named, finish stop", `{"tools":[` + weatherTool + `],"tool_choice":{"type":"function","function":{"name":"weather"}}}`,
		completion(3, call("stop", [2]string{"weather", `{"city":"Oslo"}`})), nil, false},
	{"parallel calls refused", `{"tools":[` + weatherTool + `],"parallel_tool_calls":false}`,
		completion(3, call("tool_calls", [2]string{"weather", `{"city":"Oslo"}`}, [2]string{"weather", `{"city":"Rome"}`})), []custody.Code{custody.CodeContractToolChoiceIgnored}, true},
	{"parallel calls allowed", `{"tools":[` + weatherTool + `]}`,
		completion(3, call("tool_calls", [2]string{"weather", `{"city":"Oslo"}`}, [2]string{"weather", `{"city":"Rome"}`})), nil, false},
	{"tool_calls finish without calls", `{"tools":[` + weatherTool + `]}`, completion(3, text("tool_calls", "")), []custody.Code{custody.CodeContractFinishInvalid}, true},
	{"calls with finish stop, not forced", `{"tools":[` + weatherTool + `]}`, completion(3, call("stop", [2]string{"weather", `{"city":"Oslo"}`})), []custody.Code{custody.CodeContractFinishInvalid}, false},
	{"json_object answered", `{"response_format":{"type":"json_object"}}`, completion(3, text("stop", ` {"a":1} `)), nil, false},
	{"json_object ignored", `{"response_format":{"type":"json_object"}}`, completion(3, text("stop", "Sure! Here is JSON: {")), []custody.Code{custody.CodeContractFormatInvalid}, true},
	{"json_object truncated not judged", `{"response_format":{"type":"json_object"}}`, completion(3, text("length", `{"a":`)), nil, false},
	{"json_schema valid", `{"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","required":["a"]}}}}`, completion(3, text("stop", `{"a":1}`)), nil, false},
	{"json_schema broken, not strict", `{"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","required":["a"]}}}}`, completion(3, text("stop", `{"b":1}`)), []custody.Code{custody.CodeContractFormatInvalid}, false},
	{"json_schema broken, strict", `{"response_format":{"type":"json_schema","json_schema":{"name":"s","strict":true,"schema":{"type":"object","required":["a"]}}}}`, completion(3, text("stop", `{"b":1}`)), []custody.Code{custody.CodeContractSchemaInvalid}, true},
	{"max_tokens held", `{"max_tokens":3}`, completion(3, text("length", "a b c")), nil, false},
	{"max_tokens exceeded", `{"max_tokens":3}`, completion(4, text("length", "a b c d")), []custody.Code{custody.CodeContractLimitExceeded}, true},
	{"max_completion_tokens wins", `{"max_tokens":30,"max_completion_tokens":3}`, completion(4, text("stop", "a b c d")), []custody.Code{custody.CodeContractLimitExceeded}, true},
	{"length under the limit", `{"max_tokens":30}`, completion(4, text("length", "a b c d")), []custody.Code{custody.CodeContractFinishInvalid}, false},
	{"n choices", `{"n":2}`, completion(3, text("stop", "a"), strings.Replace(text("stop", "b"), `"index":0`, `"index":1`, 1)), nil, false},
	{"n choices missing", `{"n":2}`, completion(3, text("stop", "a")), []custody.Code{custody.CodeContractChoicesInvalid}, true},
	{"n choices misindexed", `{"n":2}`, completion(3, text("stop", "a"), text("stop", "b")), []custody.Code{custody.CodeContractChoicesInvalid}, true},
	{"stop honoured", `{"stop":["END"]}`, completion(3, text("stop", "the story")), nil, false},
	{"stop kept", `{"stop":["END","\n\n"]}`, completion(3, text("stop", "the story END more")), []custody.Code{custody.CodeContractStopIgnored}, true},
	{"stop string kept as asked", `{"stop":"END","include_stop_str_in_output":true}`, completion(3, text("stop", "the story END")), nil, false},
	{"stop in a length-finished text", `{"stop":"END"}`, completion(3, text("length", "END")), nil, false},
	{"logprobs present", `{"logprobs":true}`, strings.Replace(completion(3, text("stop", "a")), `"finish_reason"`, `"logprobs":{"content":[]},"finish_reason"`, 1), nil, false},
	{"logprobs missing", `{"logprobs":true}`, completion(3, text("stop", "a")), []custody.Code{custody.CodeContractLogprobsMissing}, true},
}

func contractOf(t testing.TB, request string) Contract {
	t.Helper()
	body := `{"model":"m","messages":[{"role":"user","content":"q"}]`
	if request != `{}` {
		body += "," + request[1:]
	} else {
		body += "}"
	}
	r, err := openai.ParseRequest([]byte(body))
	if err != nil {
		t.Fatalf("request %s: %v", body, err)
	}
	return ChatContract(&r.Asked)
}

func codes(vs []Violation) []custody.Code {
	var cs []custody.Code
	for _, v := range vs {
		cs = append(cs, v.Code)
	}
	return cs
}

func TestContractPlain(t *testing.T) {
	var schemas Schemas
	for _, tc := range contractCases {
		t.Run(tc.name, func(t *testing.T) {
			c := contractOf(t, tc.request)
			r, err := openai.ParseResponse([]byte(tc.response))
			if err != nil {
				t.Fatal(err)
			}
			vs := c.Check(PlainAnswer(&c, r, []byte(tc.response)), &schemas)
			if got := codes(vs); !slices.Equal(got, tc.want) {
				t.Fatalf("codes %v, want %v (%+v)", got, tc.want, vs)
			}
			if len(vs) > 0 && vs[0].Stack != tc.stack {
				t.Errorf("Stack = %v, want %v", vs[0].Stack, tc.stack)
			}
			for _, v := range vs {
				for _, secret := range []string{"Oslo", "rm_rf", "story", "Sure", "two"} {
					if strings.Contains(v.Detail, secret) {
						t.Errorf("detail %q quotes the answer", v.Detail)
					}
				}
			}
		})
	}
}

// chunks streams a chat completion as chunks: content and each call's
// arguments split in two fragments, the finish in its own chunk, usage
// last.
func chunks(t *testing.T, completion string) []string {
	var r struct {
		Choices []struct {
			Index        int             `json:"index"`
			FinishReason string          `json:"finish_reason"`
			Logprobs     json.RawMessage `json:"logprobs"`
			Message      struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Index    int `json:"index"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(completion), &r); err != nil {
		t.Fatal(err)
	}
	var out []string
	chunk := func(choice string) {
		out = append(out, `{"id":"x","object":"chat.completion.chunk","model":"m","choices":[`+choice+`]}`)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, c := range r.Choices {
		idx := itoa(c.Index)
		lp := ""
		if len(c.Logprobs) > 0 {
			lp = `,"logprobs":` + string(c.Logprobs)
		}
		if c.Message.Content != nil {
			s := *c.Message.Content
			h := len(s) / 2
			chunk(`{"index":` + idx + `,"delta":{"content":` + q(s[:h]) + `}` + lp + `}`)
			chunk(`{"index":` + idx + `,"delta":{"content":` + q(s[h:]) + `}` + lp + `}`)
		}
		for _, tc := range c.Message.ToolCalls {
			a, h := tc.Function.Arguments, len(tc.Function.Arguments)/2
			chunk(`{"index":` + idx + `,"delta":{"tool_calls":[{"index":` + itoa(tc.Index) + `,"id":"c","type":"function","function":{"name":` + q(tc.Function.Name) + `,"arguments":` + q(a[:h]) + `}}]}}`)
			chunk(`{"index":` + idx + `,"delta":{"tool_calls":[{"index":` + itoa(tc.Index) + `,"function":{"arguments":` + q(a[h:]) + `}}]}}`)
		}
		chunk(`{"index":` + idx + `,"delta":{},"finish_reason":` + q(c.FinishReason) + `}`)
	}
	out = append(out, `{"id":"x","object":"chat.completion.chunk","model":"m","choices":[],"usage":`+string(r.Usage)+`}`)
	return out
}

// The same answers streamed, fragments joined, break the same clauses.
func TestContractStream(t *testing.T) {
	var schemas Schemas
	for _, tc := range contractCases {
		t.Run(tc.name, func(t *testing.T) {
			c := contractOf(t, tc.request)
			s := c.NewStream()
			var r openai.Response
			for _, ch := range chunks(t, tc.response) {
				if err := r.Decode([]byte(ch)); err != nil {
					t.Fatal(err)
				}
				s.Chunk(&r, []byte(ch))
			}
			if got := codes(c.Check(s.Answer(), &schemas)); !slices.Equal(got, tc.want) {
				t.Fatalf("codes %v, want %v", got, tc.want)
			}
		})
	}
}

// A member that does not read as the API defines it adds no clause.
func TestChatContractUnreadable(t *testing.T) {
	c := contractOf(t, `{"tools":"x","tool_choice":7,"response_format":[],"max_tokens":-1,"n":"2","stop":{}}`)
	if len(c.Tools) != 0 || c.ToolChoice != ChoiceAuto || c.Format != FormatText || c.MaxTokens != 0 || c.N != 0 || c.Stop != nil {
		t.Errorf("contract %+v", c)
	}
}

// A schema that does not compile holds the answer to nothing.
func TestContractUncompilableSchema(t *testing.T) {
	c := contractOf(t, `{"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","pattern":"(?<!x)"}}}]}`)
	r, _ := openai.ParseResponse([]byte(completion(3, call("tool_calls", [2]string{"f", `{"a":1}`}))))
	if vs := c.Check(PlainAnswer(&c, r, nil), nil); vs != nil {
		t.Errorf("violations %+v", vs)
	}
}
