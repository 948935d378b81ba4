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
		{"length with nothing", openai.EndpointChat, `{"choices":[{"finish_reason":"length","message":{}}],"usage":{"completion_tokens":0}}`, custody.CodeUpstreamErrorAsSuccess},
		{"length with tokens", openai.EndpointChat, `{"choices":[{"finish_reason":"length","message":{}}],"usage":{"completion_tokens":5}}`, ""},
		{"null finish_reason", openai.EndpointChat, `{"choices":[{"finish_reason":null,"message":{"content":"hi"}}]}`, custody.CodeUpstreamErrorAsSuccess},
		{"absent finish_reason", openai.EndpointCompletions, `{"choices":[{"text":"hi"}]}`, custody.CodeUpstreamErrorAsSuccess},
		{"unknown finish_reason", openai.EndpointChat, `{"choices":[{"finish_reason":"sideways","message":{"content":"hi"}}]}`, custody.CodeUpstreamErrorAsSuccess},
		{"no message", openai.EndpointChat, `{"choices":[{"index":0,"finish_reason":"stop"}]}`, custody.CodeUpstreamErrorAsSuccess},
		{"null message", openai.EndpointChat, `{"choices":[{"index":0,"finish_reason":"stop","message":null}]}`, custody.CodeUpstreamErrorAsSuccess},
		{"two choices at one index", openai.EndpointChat, `{"choices":[{"index":0,"finish_reason":"stop","message":{}},{"index":0,"finish_reason":"stop","message":{}}]}`, custody.CodeUpstreamErrorAsSuccess},
		{"negative completion tokens", openai.EndpointChat, `{"choices":[{"finish_reason":"stop","message":{}}],"usage":{"completion_tokens":-100}}`, custody.CodeUpstreamErrorAsSuccess},
		{"huge completion tokens", openai.EndpointChat, `{"choices":[{"finish_reason":"stop","message":{}}],"usage":{"completion_tokens":9223372036854775807}}`, custody.CodeUpstreamErrorAsSuccess},
		{"huge cached tokens", openai.EndpointChat, `{"choices":[{"finish_reason":"stop","message":{}}],"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":99999999}}}`, custody.CodeUpstreamErrorAsSuccess},
		{"legacy text", openai.EndpointCompletions, `{"choices":[{"finish_reason":"stop","text":"hi"}]}`, ""},
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
	wantCode(t, Choices(2, 0), custody.CodeUpstreamErrorAsSuccess)
	wantCode(t, Choices(2, 1), custody.CodeUpstreamErrorAsSuccess)
	wantCode(t, Choices(2, 2), "")
	wantCode(t, Choices(1, 0), "")
	var s Stream
	for _, chunk := range []string{`{"id":"a","choices":[{"delta":{"content":"x"}}]}`, `{"id":"a","choices":[{"delta":{},"finish_reason":"weird"}]}`} {
		r, _ := openai.ParseResponse([]byte(chunk))
		if err := s.Chunk(r); err != nil {
			wantCode(t, err, custody.CodeUpstreamErrorAsSuccess)
			return
		}
	}
	t.Error("a chunk with an unknown finish_reason passed")
}
