package anthropic

import (
	"reflect"
	"strings"
	"testing"
)

// TestThinkingDisplayOmitted: a request with thinking.display omitted
// gets its thinking blocks as Anthropic sends them then, with an empty
// thinking (and the empty signature custody always writes), plainly and
// streamed (a thinking block opened and closed with no thinking_delta);
// the engine's reasoning reaches the client in neither. Any other
// display gets the reasoning whole. Applied says the member was carried.
func TestThinkingDisplayOmitted(t *testing.T) {
	const reasoning = "The user greets."
	chat := `{"id":"c5","model":"m","choices":[{"message":{"content":"Hi.","reasoning_content":"` + reasoning + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":6}}`
	chunks := []string{
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"The user "}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"greets."}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi."}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":6}}`,
	}
	for _, tc := range []struct {
		name, thinking string
		omit           bool
		applied        string
	}{
		{"omitted", `{"type":"adaptive","display":"omitted"}`, true, "carried:thinking,thinking.display"},
		{"summarized", `{"type":"adaptive","display":"summarized"}`, false, "carried:thinking"},
		{"no display", `{"type":"enabled"}`, false, "carried:thinking"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(`{"model":"m","max_tokens":8,"thinking":` + tc.thinking + `,"messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.ToChat(); err != nil {
				t.Fatal(err)
			}
			if got := r.Applied(); got != tc.applied {
				t.Errorf("Applied() = %q, want %q", got, tc.applied)
			}
			shown := reasoning
			if tc.omit {
				shown = ""
			}
			plain, err := r.FromChat([]byte(chat))
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, plain, `{"id":"msg_c5","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"`+shown+`","signature":""},{"type":"text","text":"Hi."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":6}}`)

			tr := r.NewStreamTranslator()
			var sse []byte
			for _, c := range chunks {
				b, err := tr.Chunk([]byte(c))
				if err != nil {
					t.Fatal(err)
				}
				sse = append(sse, b...)
			}
			end, err := tr.End()
			if err != nil {
				t.Fatal(err)
			}
			sse = append(sse, end...)
			names, datas := events(t, sse)
			want := []string{"message_start", "content_block_start"}
			if !tc.omit {
				want = append(want, "content_block_delta", "content_block_delta")
			}
			want = append(want, "content_block_stop", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop")
			if !reflect.DeepEqual(names, want) {
				t.Fatalf("events %v\nwant   %v", names, want)
			}
			jsonEqual(t, datas[1], `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
			if got := strings.Contains(string(sse), "greets"); got == tc.omit {
				t.Errorf("the reasoning in the stream: %v, want %v\n%s", got, !tc.omit, sse)
			}
			var v StreamValidator
			for _, d := range datas {
				if err := v.Event(d); err != nil {
					t.Fatal(err)
				}
			}
			if err := v.End(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
