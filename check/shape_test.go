package check

import (
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint, body string
		want                 custody.Code
	}{
		{"good chat", openai.EndpointChat, `{"choices":[{"finish_reason":"stop","message":{"content":"hi"}}],"usage":{"completion_tokens":1}}`, ""},
		{"error body", openai.EndpointChat, `{"error":{"message":"prefill failed","type":"server_error"}}`, custody.CodeUpstreamErrorAsSuccess},
		{"no choices", openai.EndpointChat, `{"id":"x","choices":[]}`, custody.CodeUpstreamErrorAsSuccess},
		{"abort", openai.EndpointCompletions, `{"choices":[{"finish_reason":"abort","text":""}]}`, custody.CodeUpstreamErrorAsSuccess},
		{"length with nothing", openai.EndpointChat, `{"choices":[{"finish_reason":"length"}],"usage":{"completion_tokens":0}}`, custody.CodeUpstreamErrorAsSuccess},
		{"length with tokens", openai.EndpointChat, `{"choices":[{"finish_reason":"length"}],"usage":{"completion_tokens":5}}`, ""},
		{"embeddings", openai.EndpointEmbeddings, `{"data":[{"index":0,"embedding":[0.1]}]}`, ""},
		{"embeddings empty", openai.EndpointEmbeddings, `{"data":[]}`, custody.CodeUpstreamErrorAsSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := openai.ParseResponse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, Shape(tc.endpoint, r), tc.want)
		})
	}
}
