package gateway

import (
	"bytes"
	"errors"
	"testing"

	"github.com/custody-gateway/custody"
)

// FuzzOpenAIDialect feeds untrusted upstream bytes to the OpenAI
// dialects' readers, as a complete body and as a stream's events: they
// never panic, and every failure is a *custody.Error whose code is in the
// outcome table (so the exchange records it under a check).
func FuzzOpenAIDialect(f *testing.F) {
	for _, s := range []string{
		`{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}}`,
		`{"id":"c1","model":"m","Model":"n","choices":[]}`,
		`{"object":"list","data":[{"index":0,"embedding":[0.1]}],"model":"e","usage":{"prompt_tokens":2}}`,
		`{"error":{"message":"boom","type":"server_error","code":null}}`,
		"{\"id\":\"c1\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n{\"id\":\"c2\",\"created\":0,\"model\":\"m\",\"choices\":[]}\n[DONE]",
		"{\"id\":\"c1\",\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\n{\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"finish_reason\":\"abort\"}]}",
		`[1,2]`, `"\u0000"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []*openaiDialect{openaiChat, openaiCompletions, openaiEmbeddings} {
			if _, err := d.ParseResponse(b); err != nil {
				tableError(t, err)
			}
			r := d.NewStreamReader()
			sawUsage := false
			for _, data := range bytes.Split(b, []byte("\n")) {
				ev, err := r.Read(nil, data)
				if err != nil {
					tableError(t, err)
					break
				}
				sawUsage = sawUsage || ev.Usage != nil
				if ev.Terminal {
					if len(ev.End) == 0 {
						t.Fatal("a terminal event with nothing to end the stream with")
					}
					break
				}
			}
			if err := r.End(sawUsage); err != nil {
				tableError(t, err)
			}
		}
	})
}

func tableError(t *testing.T, err error) {
	t.Helper()
	var e *custody.Error
	if !errors.As(err, &e) || e.Code.Check() == custody.CheckInternal || e.Message == "" {
		t.Fatalf("not an outcome of the table: %#v", err)
	}
}
