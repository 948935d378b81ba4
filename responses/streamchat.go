package responses

import (
	"encoding/json"
	"strconv"

	"github.com/custody-gateway/custody/internal/jsonw"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/sse"
)

// StreamTranslator turns the chunks of one chat completion stream into a
// Responses event stream: response.created and response.in_progress with
// the first chunk; per piece of content an output item (a reasoning
// item with one reasoning_text part, a message with one output_text
// part, or a function_call), announced with
// output_item.added, grown with output_text.delta or
// function_call_arguments.delta and closed with its .done events when the
// next begins; at the end response.completed (or response.incomplete)
// with the whole Response. sequence_number rises by one per event.
type StreamTranslator struct {
	req       *Request
	createdAt int64
	obj       Object
	started   bool
	seq       int
	open      *OutputItem // the item being written, in obj.Output
	text      []byte      // an open message's text or function_call's arguments so far (a string grown by += is copied whole for every token)
	call      int         // the chat tool-call index of an open function_call
	out       []byte
	chunk     openai.Response // the last chunk: the next shares its repeated strings
}

// NewStreamTranslator translates the stream of an answer to r.
func (r *Request) NewStreamTranslator(createdAt int64) *StreamTranslator {
	return &StreamTranslator{req: r, createdAt: createdAt}
}

// Chunk translates one chat chunk; the bytes it returns are valid until
// the next call.
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
		t.obj = t.req.object(ResponseID(c.ID), c.Model, t.createdAt)
		t.emit("response.created", map[string]any{"response": t.obj})
		t.emit("response.in_progress", map[string]any{"response": t.obj})
	}
	if u := usageOf(c.Usage); u != nil {
		t.obj.Usage = u
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		d := &ch.Delta
		if r := reasoningOf(d); r != "" {
			if t.open == nil || t.open.Type != "reasoning" {
				t.closeItem()
				t.openItem(reasoningItem(c.ID, "", StatusInProgress))
				t.emit("response.content_part.added", map[string]any{"item_id": t.open.ID,
					"output_index": len(t.obj.Output) - 1, "content_index": 0,
					"part": OutputText{Type: "reasoning_text"}})
			}
			t.text = append(t.text, r...)
			t.emit("response.reasoning_text.delta", map[string]any{"item_id": t.open.ID,
				"output_index": len(t.obj.Output) - 1, "content_index": 0, "delta": r})
		}
		if d.Content != "" {
			if t.open == nil || t.open.Type != "message" {
				t.closeItem()
				t.openItem(messageItem(c.ID, "", StatusInProgress))
				t.open.Content[0].Text = ""
				t.emit("response.content_part.added", map[string]any{"item_id": t.open.ID,
					"output_index": len(t.obj.Output) - 1, "content_index": 0,
					"part": OutputText{Type: "output_text", Text: "", Annotations: []string{}}})
			}
			t.text = append(t.text, d.Content...)
			t.textDelta(d.Content)
		}
		for _, tc := range d.ToolCalls {
			if tc.ID != "" || t.open == nil || t.open.Type != "function_call" || tc.Index != t.call {
				if tc.ID == "" || tc.Function.Name == "" {
					return nil, notTranslatable("a tool call's first chunk has no id or name")
				}
				t.closeItem()
				t.call = tc.Index
				empty := ""
				t.openItem(OutputItem{Type: "function_call", ID: "fc_" + tc.ID, Status: StatusInProgress,
					CallID: tc.ID, Name: tc.Function.Name, Arguments: &empty})
			}
			if tc.Function.Arguments != "" {
				t.text = append(t.text, tc.Function.Arguments...) // the call's arguments so far
				t.argumentsDelta(tc.Function.Arguments)
			}
		}
		if ch.FinishReason != "" {
			status, details := statusOf(ch.FinishReason)
			if status == "" {
				return nil, notTranslatable("finish_reason %q", ch.FinishReason)
			}
			t.obj.Status, t.obj.IncompleteDetails = status, details
			t.closeItem()
		}
	}
	return t.out, nil
}

// End closes the stream with response.completed or response.incomplete.
func (t *StreamTranslator) End() ([]byte, error) {
	t.out = t.out[:0]
	if !t.started {
		return nil, notTranslatable("an empty stream")
	}
	t.closeItem()
	switch t.obj.Status {
	case StatusCompleted:
		t.emit("response.completed", map[string]any{"response": t.obj})
	case StatusIncomplete:
		t.emit("response.incomplete", map[string]any{"response": t.obj})
	default:
		return nil, notTranslatable("the stream has no finish_reason")
	}
	return t.out, nil
}

func (t *StreamTranslator) openItem(it OutputItem) {
	t.obj.Output = append(t.obj.Output, it)
	t.open = &t.obj.Output[len(t.obj.Output)-1]
	t.text = t.text[:0]
	var added any = *t.open
	switch it.Type {
	case "message":
		// A message is added empty, as OpenAI sends it; its part follows
		// in response.content_part.added, which the SDKs' accumulators
		// (openai@7's stream helpers) append at index 0.
		added = map[string]any{"type": it.Type, "id": it.ID, "status": it.Status, "role": it.Role,
			"content": []OutputText{}}
	case "reasoning":
		// So is a reasoning item, its reasoning_text part following.
		added = map[string]any{"type": it.Type, "id": it.ID, "status": it.Status, "summary": []OutputText{},
			"content": []OutputText{}}
	}
	t.emit("response.output_item.added", map[string]any{"output_index": len(t.obj.Output) - 1, "item": added})
}

func (t *StreamTranslator) closeItem() {
	if t.open == nil {
		return
	}
	i := len(t.obj.Output) - 1
	switch t.open.Type {
	case "reasoning":
		t.open.Content[0].Text = string(t.text)
		t.emit("response.reasoning_text.done", map[string]any{"item_id": t.open.ID, "output_index": i,
			"content_index": 0, "text": t.open.Content[0].Text})
		t.emit("response.content_part.done", map[string]any{"item_id": t.open.ID, "output_index": i,
			"content_index": 0, "part": t.open.Content[0]})
	case "message":
		t.open.Content[0].Text = string(t.text)
		t.emit("response.output_text.done", map[string]any{"item_id": t.open.ID, "output_index": i,
			"content_index": 0, "text": t.open.Content[0].Text, "logprobs": []string{}})
		t.emit("response.content_part.done", map[string]any{"item_id": t.open.ID, "output_index": i,
			"content_index": 0, "part": t.open.Content[0]})
	case "function_call":
		*t.open.Arguments = string(t.text)
		t.emit("response.function_call_arguments.done", map[string]any{"item_id": t.open.ID, "output_index": i,
			"name": t.open.Name, "arguments": *t.open.Arguments})
	}
	t.open.Status = StatusCompleted
	t.emit("response.output_item.done", map[string]any{"output_index": i, "item": *t.open})
	t.open = nil
}

// textDelta appends the response.output_text.delta event of the open
// message, written out by hand as emit's encoding/json writes it (the
// map's keys sorted): one goes out for every token, where reflection
// over a map cost a large part of the stream's CPU.
func (t *StreamTranslator) textDelta(delta string) {
	t.out = append(t.out, "event: response.output_text.delta\ndata: {\"content_index\":0"...)
	t.out = jsonw.StringField(t.out, `,"delta":`, delta)
	t.out = jsonw.StringField(t.out, `,"item_id":`, t.open.ID)
	t.out = append(t.out, `,"logprobs":[],"output_index":`...)
	t.out = strconv.AppendInt(t.out, int64(len(t.obj.Output)-1), 10)
	t.out = append(t.out, `,"sequence_number":`...)
	t.out = strconv.AppendInt(t.out, int64(t.seq), 10)
	t.out = append(t.out, ",\"type\":\"response.output_text.delta\"}\n\n"...)
	t.seq++
}

// argumentsDelta appends the response.function_call_arguments.delta event
// of the open function_call, written out by hand as textDelta is.
func (t *StreamTranslator) argumentsDelta(delta string) {
	t.out = append(t.out, "event: response.function_call_arguments.delta\ndata: {"...)
	t.out = jsonw.StringField(t.out, `"delta":`, delta)
	t.out = jsonw.StringField(t.out, `,"item_id":`, t.open.ID)
	t.out = append(t.out, `,"output_index":`...)
	t.out = strconv.AppendInt(t.out, int64(len(t.obj.Output)-1), 10)
	t.out = append(t.out, `,"sequence_number":`...)
	t.out = strconv.AppendInt(t.out, int64(t.seq), 10)
	t.out = append(t.out, ",\"type\":\"response.function_call_arguments.delta\"}\n\n"...)
	t.seq++
}

// emit appends one event: its members plus type and sequence_number.
func (t *StreamTranslator) emit(typ string, members map[string]any) {
	members["type"] = typ
	members["sequence_number"] = t.seq
	t.seq++
	t.out = sse.AppendEvent(t.out, typ, members)
}

// EndFailed closes the stream with response.failed: for an upstream that
// stopped without finishing (the simulator's error-as-200 faults).
func (t *StreamTranslator) EndFailed() []byte {
	t.out = t.out[:0]
	t.closeItem()
	t.obj.Status = StatusFailed
	t.obj.Error = json.RawMessage(`{"code":"server_error","message":"the model stopped before finishing"}`)
	t.emit("response.failed", map[string]any{"response": t.obj})
	return t.out
}
