package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai/openaitest"
)

func seeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s", dir)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParseRequest: any body parses or is refused with invalid_request;
// what parses translates to chat JSON or is refused naming a param.
func FuzzParseRequest(f *testing.F) {
	seeds(f, "requests")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			var e *custody.Error
			if !errors.As(err, &e) || e.Code != custody.CodeInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		out, err := r.ToChat()
		if err != nil {
			var e *custody.Error
			if !errors.As(err, &e) || e.Code != custody.CodeInvalidRequest || e.Param == "" {
				t.Fatalf("translation error %v names no param", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("translation is not JSON: %s", out)
		}
	})
}

// FuzzStream: any lines are validated as events, read as Responses and
// translated as chat chunks without a panic.
func FuzzStream(f *testing.F) {
	seeds(f, "streams")
	r, err := ParseRequest([]byte(`{"model":"m","input":"hi","stream":true}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, transcript []byte) {
		var v StreamValidator
		tr := r.NewStreamTranslator(1)
		for _, line := range bytes.Split(transcript, []byte("\n")) {
			_ = v.Event(line)
			_, _ = tr.Chunk(line)
			if rr, err := ParseResponse(line); err == nil {
				_ = rr.Failure()
			}
			_, _ = r.FromChat(line, 1)
		}
		_ = v.End()
		_, _ = tr.End()
	})
}

// FuzzStreamDelta: the response.output_text.delta and
// response.function_call_arguments.delta events written by hand are, byte
// for byte, what emit's encoding/json writes for them, whatever the text,
// the item id, the output index and the sequence number.
func FuzzStreamDelta(f *testing.F) {
	for _, s := range []string{"", "Hel", "line\nnext \"quoted\" <b>&amp;</b>", "\u2028\x00\xff"} {
		f.Add(s, "msg_c1", 0, 4)
	}
	f.Fuzz(func(t *testing.T, delta, itemID string, outputs, seq int) {
		outputs = outputs%8 + 8 // 1 to 15 items, the last one open
		mk := func() *StreamTranslator {
			tr := &StreamTranslator{seq: seq}
			tr.obj.Output = make([]OutputItem, outputs)
			tr.open = &tr.obj.Output[outputs-1]
			tr.open.ID = itemID
			return tr
		}
		hand, refl := mk(), mk()
		hand.textDelta(delta)
		refl.emit("response.output_text.delta", map[string]any{"item_id": refl.open.ID,
			"output_index": len(refl.obj.Output) - 1, "content_index": 0, "delta": delta, "logprobs": []string{}})
		hand.argumentsDelta(delta)
		refl.emit("response.function_call_arguments.delta", map[string]any{"item_id": refl.open.ID,
			"output_index": len(refl.obj.Output) - 1, "delta": delta})
		if !bytes.Equal(hand.out, refl.out) || hand.seq != refl.seq {
			t.Fatalf("delta %q, item %q:\nby hand:       %s (next %d)\nencoding/json: %s (next %d)", delta, itemID, hand.out, hand.seq, refl.out, refl.seq)
		}
	})
}

// BenchmarkStreamTranslator: a text answer's stream of 50 chunks, as the
// Responses front translates it from the chat upstream, per stream.
func BenchmarkStreamTranslator(b *testing.B) {
	r, _ := ParseRequest([]byte(`{"model":"m","input":"hi","stream":true}`))
	chunks := [][]byte{[]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"sim-1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)}
	for i := range 48 {
		chunks = append(chunks, []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"sim-1","choices":[{"index":0,"delta":{"content":" word`+strconv.Itoa(i)+`"},"finish_reason":null}]}`))
	}
	chunks = append(chunks, []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"sim-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":48}}`))
	openaitest.BenchmarkStreamTranslator(b, chunks, func() openaitest.StreamTranslator { return r.NewStreamTranslator(1) })
}
