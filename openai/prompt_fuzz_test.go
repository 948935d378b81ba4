package openai

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParsePrompt: any body gives a prompt or an ErrBadRequest, never a
// panic; a prompt's parts and lengths are never negative.
func FuzzParsePrompt(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}],"tools":[{"type":"function"}]}`,
		`{"prompt":["a","b"]}`, `{"prompt":[1,2,3]}`, `{"prompt":[[1],[2,3]]}`, `{"input":"x"}`, `{"messages":[]}`, `{"tools":{}}`, `[]`,
	} {
		f.Add(EndpointChat, []byte(s))
		f.Add(EndpointCompletions, []byte(s))
		f.Add(EndpointEmbeddings, []byte(s))
	}
	f.Fuzz(func(t *testing.T, endpoint string, body []byte) {
		p, err := ParsePrompt(endpoint, body)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error %v is not an ErrBadRequest", err)
			}
			return
		}
		if p.Parts() < 1 || p.Len() < 0 || p.PreTokenized < 0 || p.Media < 0 || p.ToolCount < 0 {
			t.Fatalf("prompt %+v", p)
		}
	})
}

// FuzzRequestPrompt: on any body ParseRequest accepts, Request.Prompt
// gives what ParsePrompt does (the same prompt, or an error both times).
func FuzzRequestPrompt(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},null,{"text":null}]},{"role":"assistant","content":null,"tool_calls":[{"function":{"arguments":"{}","name":"f"}},null,{"function":null}]}],"tools":[{"type":"function"}]}`,
		`{"model":"m","messages":[null,{"role":null,"name":"n\u00e9","content":"a\"b"}],"tools":null}`,
		`{"model":"m","messages":[{"role":1}]}`, `{"model":"m","messages":[{"content":5}]}`, `{"model":"m","messages":"x"}`,
		`{"model":"m","messages":[]}`, `{"model":"m","messages":null}`, `{"model":"m"}`, `{"model":"m","messages":[1]}`,
		`{"model":"m","messages":[{"tool_calls":{}}]}`, `{"model":"m","messages":[{"tool_calls":[{"function":"f"}]}]}`,
		`{"model":"m","messages":[{"tool_calls":[{"function":{"name":2}}]}]}`, `{"model":"m","messages":[{"tool_calls":[3]}]}`,
		`{"model":"m","messages":[{"role":"user"}],"tools":{}}`, `{"model":"m","messages":[{"role":"user"}],"tools":[1,{},null]}`,
		`{"model":"m","messages":[{"role":"user","x":{"ROLE":1}}],"Tools2":1}`,
		`{"model":"m","meſſages":[{"role":"user"}]}`, `{"model":"m","messages":[{"role":"user","\u0063ontent":"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		got, gerr := r.Prompt(EndpointChat)
		want, werr := ParsePrompt(EndpointChat, body)
		if (gerr != nil) != (werr != nil) {
			t.Fatalf("body %q: Prompt error %v, ParsePrompt error %v", body, gerr, werr)
		}
		if gerr != nil {
			if !errors.Is(gerr, ErrBadRequest) {
				t.Fatalf("error %v is not an ErrBadRequest", gerr)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("body %q:\nPrompt      %+v\nParsePrompt %+v", body, got, want)
		}
	})
}

func BenchmarkPrompt(b *testing.B) {
	body := []byte(`{"model":"sim-1","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Summarise the attached quarterly report in three bullet points, each under twenty words."}],"max_tokens":32}`)
	r, err := ParseRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scanner", func(b *testing.B) {
		for b.Loop() {
			r.Prompt(EndpointChat)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			ParsePrompt(EndpointChat, body)
		}
	})
}
