package anthropic

import (
	"encoding/json"
	"strconv"

	"github.com/custody-gateway/custody/internal/jsonw"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/sse"
)

// StreamTranslator turns the chunks of one chat completion stream into a
// Messages event stream: message_start with the first chunk, then per
// piece of content a content block (thinking_delta for the engine's
// reasoning, text_delta for text, input_json_delta for a tool call's
// arguments), each closed when the next begins, and at
// the end message_delta (stop_reason, usage) and message_stop.
//
// It holds one stream's state; the owner calls Chunk for each chunk in
// order and End once after the upstream's [DONE]. The returned bytes are
// whole SSE events, "event: <type>" and "data: <json>".
type StreamTranslator struct {
	started bool
	open    bool   // a content block is open
	kind    string // its type: thinking | text | tool_use
	index   int    // the open (or next) block's index
	call    int    // the chat tool-call index of the open tool_use block
	stop    string
	usage   Usage
	out     []byte
	chunk   openai.Response // the last chunk: the next shares its repeated strings
	// omitThinking: thinking blocks go out without their text
	// (thinking.display omitted; Request.NewStreamTranslator).
	omitThinking bool
}

// Chunk translates one chat chunk (its JSON); the bytes it returns are
// valid until the next call. A chunk whose finish_reason
// has no stop_reason (abort, error) is an error: custody's chat checks
// refuse those before translation.
func (t *StreamTranslator) Chunk(data []byte) ([]byte, error) {
	if err := t.chunk.Decode(data); err != nil {
		return nil, notTranslatable("a chunk is not a chat completion chunk")
	}
	return t.Translate(&t.chunk)
}

// Translate is Chunk of a chunk decoded already (the gateway's chat
// checks decoded it): it reads c, and keeps none of its slices.
func (t *StreamTranslator) Translate(c *openai.Response) ([]byte, error) {
	t.out = t.out[:0]
	if !t.started {
		t.started = true
		start := MessageBody{ID: MessageID(c.ID), Type: "message", Role: "assistant", Model: c.Model,
			Content: []OutBlock{}, Usage: Usage{}}
		t.event("message_start", struct {
			Type    string      `json:"type"`
			Message MessageBody `json:"message"`
		}{"message_start", start})
	}
	if c.Usage != nil {
		t.usage = usageOf(c.Usage)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		d := &ch.Delta
		if r := reasoningOf(d); r != "" {
			if !t.open || t.kind != "thinking" {
				t.startBlock("thinking", thinkingBlock(""))
			}
			if !t.omitThinking {
				t.delta("thinking_delta", `"thinking":`, r)
			}
		}
		if d.Content != "" {
			if !t.open || t.kind != "text" {
				t.startBlock("text", OutBlock{Type: "text", Text: new(string)})
			}
			t.delta("text_delta", `"text":`, d.Content)
		}
		for _, tc := range d.ToolCalls {
			if tc.ID != "" || !t.open || t.kind != "tool_use" || tc.Index != t.call {
				if tc.ID == "" || tc.Function.Name == "" {
					return nil, notTranslatable("a tool call's first chunk has no id or name")
				}
				t.call = tc.Index
				t.startBlock("tool_use", OutBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name,
					Input: json.RawMessage("{}")})
			}
			if tc.Function.Arguments != "" {
				t.delta("input_json_delta", `"partial_json":`, tc.Function.Arguments)
			}
		}
		if ch.FinishReason != "" {
			if t.stop = StopReasonOf(ch.FinishReason); t.stop == "" {
				return nil, notTranslatable("finish_reason %q", ch.FinishReason)
			}
			t.closeBlock()
		}
	}
	return t.out, nil
}

// End closes the stream: message_delta with the stop_reason and usage
// (input_tokens included, since message_start could not know them), then
// message_stop. A stream that never said why it stopped is an error.
func (t *StreamTranslator) End() ([]byte, error) {
	t.out = t.out[:0]
	if !t.started {
		return nil, notTranslatable("an empty stream")
	}
	t.closeBlock()
	if t.stop == "" {
		return nil, notTranslatable("the stream has no finish_reason")
	}
	stop := t.stop
	t.event("message_delta", struct {
		Type  string `json:"type"`
		Delta struct {
			StopReason   *string `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		} `json:"delta"`
		Usage Usage `json:"usage"`
	}{Type: "message_delta", Delta: struct {
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}{StopReason: &stop}, Usage: t.usage})
	t.event("message_stop", map[string]string{"type": "message_stop"})
	return t.out, nil
}

func (t *StreamTranslator) startBlock(kind string, b OutBlock) {
	t.closeBlock()
	t.open, t.kind = true, kind
	t.event("content_block_start", struct {
		Type         string   `json:"type"`
		Index        int      `json:"index"`
		ContentBlock OutBlock `json:"content_block"`
	}{"content_block_start", t.index, b})
}

// delta appends a content_block_delta event of the open block: its delta
// is {key: value, "type": kind}, written out by hand as encoding/json
// writes that map (keys sorted: "partial_json" and "text" before "type").
// One goes out for every token, where reflection cost a quarter of the
// translation's CPU (BenchmarkStreamTranslator).
func (t *StreamTranslator) delta(kind, key, value string) {
	t.out = append(t.out, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	t.out = strconv.AppendInt(t.out, int64(t.index), 10)
	t.out = append(t.out, `,"delta":{`...)
	t.out = jsonw.StringField(t.out, key, value)
	t.out = append(t.out, `,"type":"`...)
	t.out = append(t.out, kind...)
	t.out = append(t.out, "\"}}\n\n"...)
}

func (t *StreamTranslator) closeBlock() {
	if !t.open {
		return
	}
	t.event("content_block_stop", struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}{"content_block_stop", t.index})
	t.open = false
	t.index++
}

func (t *StreamTranslator) event(name string, v any) {
	t.out = sse.AppendEvent(t.out, name, v)
}

// EndWithoutStop closes the stream as an upstream that stopped without
// saying why does: the open block closed, message_delta with a null
// stop_reason, message_stop. custody's validator refuses such a stream;
// the simulator's error-as-200 faults send it.
func (t *StreamTranslator) EndWithoutStop() []byte {
	t.out = t.out[:0]
	t.closeBlock()
	t.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": nil, "stop_sequence": nil}, "usage": t.usage})
	t.event("message_stop", map[string]string{"type": "message_stop"})
	return t.out
}
