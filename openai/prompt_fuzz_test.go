package openai

import (
	"errors"
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
