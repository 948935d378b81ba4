package gateway

import (
	"bytes"
	"testing"

	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/responses"
)

// TestStreamBridgesReadTheCheckedChunk: the Messages and Responses
// bridges translate a chat stream from the chunk the chat checks decoded
// (Event.Chunk) into exactly the bytes they make decoding each event
// themselves, text and tool calls alike.
func TestStreamBridgesReadTheCheckedChunk(t *testing.T) {
	chunks := []string{
		`{"id":"c1","object":"chat.completion.chunk","created":1764590000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1764590000,"model":"m","choices":[{"index":0,"delta":{"content":"Let \"me\"\n"}}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1764590000,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1764590000,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1764590000,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1764590000,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4}}`,
	}
	req, err := responses.ParseRequest([]byte(`{"model":"m","input":"hi","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	mreq, err := anthropic.ParseRequest([]byte(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, newBridge := range map[string]func() StreamBridge{
		"messages":  (&messagesBridge{req: mreq}).NewStream,
		"responses": (&responsesBridge{req: req}).NewStream,
	} {
		t.Run(name, func(t *testing.T) {
			checked, alone := newBridge(), newBridge()
			reader := &openaiStream{}
			var got, want []byte
			for i, c := range chunks {
				ev, err := reader.Read(nil, []byte(c))
				if err != nil || ev.Chunk == nil {
					t.Fatalf("chunk %d: read %v, decoded chunk %v", i, err, ev.Chunk != nil)
				}
				a, err := checked.Event([]byte(c), &ev)
				if err != nil {
					t.Fatalf("chunk %d from the checked chunk: %v", i, err)
				}
				b, err := alone.Event([]byte(c), &Event{})
				if err != nil {
					t.Fatalf("chunk %d decoded alone: %v", i, err)
				}
				got, want = append(got, a...), append(want, b...)
			}
			got, want = append(got, checked.End()...), append(want, alone.End()...)
			if len(want) == 0 || !bytes.Equal(got, want) {
				t.Fatalf("from the checked chunks:\n%s\ndecoding alone:\n%s", got, want)
			}
			// It is the checked chunk that is translated, not the bytes
			// again.
			b := newBridge()
			ev, _ := (&openaiStream{}).Read(nil, []byte(`{"id":"c1","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"checked"}}]}`))
			out, err := b.Event([]byte(`{"id":"c1","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"raw"}}]}`), &ev)
			if err != nil || !bytes.Contains(out, []byte(`"checked"`)) || bytes.Contains(out, []byte(`"raw"`)) {
				t.Errorf("translated %q (%v), want the checked chunk's text", out, err)
			}
		})
	}
}
