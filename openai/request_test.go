package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestParseRequest(t *testing.T) {
	cases := []struct {
		name, body           string
		model                string
		stream, includeUsage bool
		bad                  bool
	}{
		{name: "plain", body: `{"model":"m","messages":[]}`, model: "m"},
		{name: "stream", body: `{"messages":[],"stream":true,"model":"m"}`, model: "m", stream: true},
		{name: "stream with usage", body: `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, model: "m", stream: true, includeUsage: true},
		{name: "escaped model", body: `{"model":"a\"b\u00e9"}`, model: "a\"b\u00e9"},
		{name: "nested model ignored", body: `{"x":{"model":"inner"},"model":"outer"}`, model: "outer"},
		{name: "whitespace", body: " {\n \"model\" : \"m\" ,\"stream\":\tfalse}\n", model: "m"},
		{name: "not json", body: `{"model":`, bad: true},
		{name: "array", body: `["model"]`, bad: true},
		{name: "model number", body: `{"model":5}`, bad: true},
		{name: "no model", body: `{"messages":[]}`, bad: true},
		{name: "stream string", body: `{"model":"m","stream":"yes"}`, bad: true},
		{name: "stream_options array", body: `{"model":"m","stream_options":[1]}`, bad: true},
		{name: "bad utf8", body: "{\"model\":\"m\xff\"}", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(tc.body))
			if tc.bad {
				if !errors.Is(err, ErrBadRequest) {
					t.Fatalf("err = %v, want ErrBadRequest", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Model != tc.model || r.Stream != tc.stream || r.IncludeUsage != tc.includeUsage {
				t.Errorf("got model=%q stream=%v usage=%v", r.Model, r.Stream, r.IncludeUsage)
			}
		})
	}
}

func TestRewrite(t *testing.T) {
	cases := []struct{ name, body, to, want string }{
		{"same model untouched", `{"model":"m","messages":[]}`, "m", `{"model":"m","messages":[]}`},
		{"model replaced", `{"model":"m","messages":[]}`, "m-0827", `{"model":"m-0827","messages":[]}`},
		{"stream gets usage", `{"stream":true,"model":"m"}`, "m", `{"stream_options":{"include_usage":true},"stream":true,"model":"m"}`},
		{"stream options kept", `{"model":"m","stream":true,"stream_options":{"x":1}}`, "n", `{"model":"n","stream":true,"stream_options":{"include_usage":true,"x":1}}`},
		{"options before model", `{"stream_options":null,"stream":true,"model":"m"}`, "n", `{"stream_options":{"include_usage":true},"stream":true,"model":"n"}`},
		{"usage already asked", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, "m", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got := string(r.Rewrite(tc.to))
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("rewrite is not JSON")
			}
		})
	}
}

func TestParsePrompt(t *testing.T) {
	p, err := ParsePrompt(EndpointChat, []byte(`{"messages":[{"role":"system","content":"be brief"},{"role":"user","name":"bob","content":[{"type":"text","text":"hi "},{"type":"image_url","image_url":{}},{"type":"text","text":"there"}]},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Message{{Role: "system", Content: "be brief"}, {Role: "user", Name: "bob", Content: "hi \nthere"},
		{Role: "assistant", ToolCalls: "f{}", Calls: 1}}
	for i, m := range want {
		if p.Messages[i] != m {
			t.Errorf("message %d = %+v, want %+v", i, p.Messages[i], m)
		}
	}
	for _, tc := range []struct {
		ep, body string
		texts    int
		ids      int
		bad      bool
	}{
		{EndpointCompletions, `{"prompt":"abc"}`, 1, 0, false},
		{EndpointCompletions, `{"prompt":["a","b"]}`, 2, 0, false},
		{EndpointCompletions, `{"prompt":[1,2,3]}`, 0, 3, false},
		{EndpointEmbeddings, `{"input":[[1,2],[3]]}`, 0, 3, false},
		{EndpointEmbeddings, `{"input":{"x":1}}`, 0, 0, true},
		{EndpointCompletions, `{"model":"m"}`, 0, 0, true},
		{EndpointChat, `{"messages":"hello"}`, 0, 0, true},
		{EndpointChat, `{"messages":[]}`, 0, 0, true},
		{EndpointChat, `{"messages":[{"role":"user","content":5}]}`, 0, 0, true},
	} {
		p, err := ParsePrompt(tc.ep, []byte(tc.body))
		if tc.bad {
			if !errors.Is(err, ErrBadRequest) {
				t.Errorf("%s: err = %v, want ErrBadRequest", tc.body, err)
			}
			continue
		}
		if err != nil || len(p.Texts) != tc.texts || p.PreTokenized != tc.ids {
			t.Errorf("%s: %+v %v", tc.body, p, err)
		}
	}
}

// FuzzParseRequest: never panics; what it accepts agrees with
// encoding/json on model and stream, and Rewrite keeps the body JSON
// with the new model.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{`{"model":"m","messages":[]}`, `{"model":"m","stream":true,"stream_options":{"include_usage":false}}`, `{"x":[{"model":1}],"model":"\u00e9"}`, `{}`, `[]`} {
		f.Add([]byte(s))
	}
	addSeeds(f, "testdata/requests")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		var ref struct {
			Model  string `json:"model"`
			Stream *bool  `json:"stream"`
		}
		if err := json.Unmarshal(body, &ref); err != nil {
			t.Fatalf("accepted what encoding/json rejects: %v", err)
		}
		if ref.Model != r.Model || (ref.Stream != nil && *ref.Stream) != r.Stream {
			t.Fatalf("model/stream %q/%v, encoding/json says %q/%v", r.Model, r.Stream, ref.Model, ref.Stream)
		}
		out := r.Rewrite("fuzz-model")
		if !json.Valid(out) {
			t.Fatalf("rewrite is not JSON: %s", out)
		}
		r2, err := ParseRequest(out)
		if err != nil || r2.Model != "fuzz-model" || (r.Stream && !r2.IncludeUsage) {
			t.Fatalf("rewrite lost something: %v %+v", err, r2)
		}
	})
}

// TestRewriteSetsMembers: a member custody sets is written over the
// client's value (never beside it: the upstream would read one of two),
// or added when the client sent none; the rest of the body is kept.
func TestRewriteSetsMembers(t *testing.T) {
	salt := Member{Name: "cache_salt", Value: []byte(`"s-tenant"`)}
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","messages":[]}`, `{"cache_salt":"s-tenant","model":"m","messages":[]}`},
		{`{"model":"m","cache_salt":"stolen-from-victim","messages":[]}`, `{"model":"m","cache_salt":"s-tenant","messages":[]}`},
		{`{"model":"m","stream":true,"cache_salt":null}`, `{"stream_options":{"include_usage":true},"model":"m","stream":true,"cache_salt":"s-tenant"}`},
	} {
		r, err := ParseRequest([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(r.Rewrite("m", salt)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.body, got, tc.want)
		}
	}
	r, _ := ParseRequest([]byte(`{"model":"m","cache_prompt":true}`))
	if got := string(r.Rewrite("up", Member{Name: "cache_prompt", Value: []byte("false")})); got != `{"model":"up","cache_prompt":false}` {
		t.Errorf("cache_prompt: %s", got)
	}
	if _, err := ParseRequest([]byte(`{"model":"m","cache_salt":"a","Cache_Salt":"b"}`)); err == nil {
		t.Error("a case-variant copy of cache_salt was accepted")
	}
}

// The members the contract check reads are located, and are strict: a
// second copy (or a case variant) is refused like a second model.
func TestRequestAsked(t *testing.T) {
	r, err := ParseRequest([]byte(`{"model":"m","tools":[{"type":"function","function":{"name":"f","strict":true}}],"tool_choice":"required","max_tokens":5,"n":2,"stop":["x"],"response_format":{"type":"json_object"},"logprobs":true}`))
	if err != nil {
		t.Fatal(err)
	}
	a := r.Asked
	if string(a.ToolChoice) != `"required"` || string(a.MaxTokens) != "5" || string(a.N) != "2" || string(a.Stop) != `["x"]` ||
		string(a.Logprobs) != "true" || !bytes.HasPrefix(a.Tools, []byte(`[{`)) || !bytes.HasPrefix(a.ResponseFormat, []byte(`{"type"`)) {
		t.Errorf("Asked = %+v", a)
	}
	for _, body := range []string{`{"model":"m","max_tokens":5,"Max_Tokens":50}`, `{"model":"m","response_format":{},"response_format":{}}`,
		`{"model":"m","tools":[{"type":"function","function":{"name":"f","strict":true,"Strict":false}}]}`} {
		if _, err := ParseRequest([]byte(body)); err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
}
