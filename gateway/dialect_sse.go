package gateway

import (
	"bytes"
	"encoding/json"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/sse"
	"github.com/custody-gateway/custody/upstream"
)

// Helpers the event-stream dialects (Messages, Responses) share.

// namedEvent reconciles an event's name (its "event" field) with its
// data's "type", which is what the dialects' checks read: the client
// receives the event named by its type (sse.AppendNamed), so that what it
// dispatches on is what custody checked. Data without a type takes the
// name, as Anthropic's SDKs do, and gets it written into the data (in
// *spliced, reused) so that the checks and the client read one value. A
// name that disagrees with the type is stream_inconsistent: a client
// that dispatches on the name would read another event than custody.
func namedEvent(name, data []byte, spliced *[]byte) (string, []byte, error) {
	typ := eventType(data)
	if err := engineErrorEvent(name, typ, data); err != nil {
		return "", nil, err
	}
	if typ == "" && len(name) > 0 {
		if d, ok := withType(*spliced, data, name); ok {
			*spliced, data, typ = d, d, string(name)
		}
	}
	if len(name) > 0 && string(name) != typ {
		return "", nil, custody.Errorf(custody.CodeStreamInconsistent, "an event's name disagrees with its data's type")
	}
	if !sse.ValidName(typ) {
		return "", nil, custody.Errorf(custody.CodeStreamInconsistent, "an event has no type that can be relayed")
	}
	return typ, data, nil
}

// engineErrorEvent reads an error an engine sent inside a 200 stream in
// OpenAI's error shape rather than the dialect's: llama.cpp's /v1/messages
// sends "event: error" with {"code":500,"message":...,"type":"server_error"},
// and its /v1/responses a data of {"error":{...}} with no type. Either is
// the generation failing, upstream_error_as_success as the dialects' own
// error events are, with the engine's words sanitised, as on the chat
// path; not a disagreement of name and type (stream_inconsistent), which
// would blame the wire for the engine's failure. A well-formed error event
// (its type "error") is the validators' to read.
func engineErrorEvent(name []byte, typ string, data []byte) error {
	if typ == "error" || (string(name) != "error" && typ != "") {
		return nil
	}
	var e struct {
		Message string `json:"message"`
		Error   *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil || (string(name) != "error" && e.Error == nil) {
		return nil
	}
	msg := e.Message
	if e.Error != nil {
		msg = e.Error.Message
	}
	err := &custody.Error{Code: custody.CodeUpstreamErrorAsSuccess, Message: "the upstream sent an error event inside a 200 stream"}
	if msg != "" {
		err.Err = engineSaid(upstream.Sanitize(msg))
	}
	return err
}

// withType writes data, a JSON object, into dst[:0] with a "type" member
// name first. ok is false when data is not an object.
func withType(dst, data, name []byte) (out []byte, ok bool) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false
	}
	rest := trimmed[1:]
	quoted, err := json.Marshal(string(name))
	if err != nil {
		return nil, false
	}
	out = append(dst[:0], `{"type":`...)
	out = append(out, quoted...)
	if r := bytes.TrimLeft(rest, " \t\r\n"); len(r) > 0 && r[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), true
}

// chatTranslator is what the Messages and Responses stream translators
// have in common: a chat chunk in, the dialect's events out.
type chatTranslator interface {
	Chunk(data []byte) ([]byte, error)
	Translate(c *openai.Response) ([]byte, error)
}

// translateChunk translates one chat event: the chunk the chat checks
// decoded (ev.Chunk) when there is one, else the event's data. The
// translators reuse their output buffer, so the bytes are copied.
func translateChunk(t chatTranslator, data []byte, ev *Event) ([]byte, error) {
	var out []byte
	var err error
	if ev.Chunk != nil {
		out, err = t.Translate(ev.Chunk)
	} else {
		out, err = t.Chunk(data)
	}
	return bytes.Clone(out), err
}

// eventType is the "type" member of an event's data.
func eventType(data []byte) string {
	var e struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &e)
	return e.Type
}

// deltaText is the text of a Messages text_delta or a Responses
// output_text.delta event.
func deltaText(data []byte) string {
	var e struct {
		Delta json.RawMessage `json:"delta"`
	}
	if json.Unmarshal(data, &e) != nil || len(e.Delta) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Delta, &s) == nil {
		return s
	}
	var d struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(e.Delta, &d)
	return d.Text
}
