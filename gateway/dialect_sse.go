package gateway

import (
	"bytes"
	"encoding/json"

	"github.com/custody-gateway/custody/openai"
)

// Helpers the event-stream dialects (Messages, Responses) share.

// sseData is the data of one whole SSE event (its data lines joined).
func sseData(raw []byte) []byte {
	var out []byte
	n := 0
	for _, line := range bytes.Split(raw, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		d, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		d = bytes.TrimPrefix(d, []byte(" "))
		if n > 0 {
			out = append(out, '\n')
		}
		out = append(out, d...)
		n++
	}
	return out
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
func translateChunk(t chatTranslator, raw []byte, ev *Event) ([]byte, error) {
	var out []byte
	var err error
	if ev.Chunk != nil {
		out, err = t.Translate(ev.Chunk)
	} else {
		out, err = t.Chunk(sseData(raw))
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

// rawJSON is data as a value that encodes as itself.
func rawJSON(data []byte) json.RawMessage { return json.RawMessage(bytes.Clone(data)) }
