package gateway

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

// TestMessagesStreamReader: a Messages upstream's events give the
// exchange the stream's identity at message_start, its usage at
// message_delta (the whole prompt: input plus cached), and its terminal
// event, relayed as it came once the verdict is written.
func TestMessagesStreamReader(t *testing.T) {
	r := messages.NewStreamReader()
	events := []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":5,"cache_read_input_tokens":7,"output_tokens":1}}}`,
		`{"type":"ping"}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`,
	}
	var got []Event
	var texts [][]Text // each event's, copied: valid until the next Read
	for _, e := range events {
		ev, err := r.Read(nil, []byte(e))
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		got = append(got, ev)
		texts = append(texts, append([]Text(nil), ev.Texts...))
	}
	if got[0].ID != "msg_1" || got[0].Model != "claude-x" || got[0].Usage != nil {
		t.Errorf("message_start: %+v", got[0])
	}
	if want := []Text{{Place: Place{Field: "text"}, S: "hello"}}; !reflect.DeepEqual(texts[3], want) {
		t.Errorf("delta: %+v", texts[3])
	}
	if u := got[5].Usage; u == nil || u.Prompt != 12 || u.Cached != 7 || u.Completion != 3 {
		t.Errorf("message_delta usage: %+v", got[5].Usage)
	}
	last := got[6]
	if !last.Terminal || string(last.End) != "event: message_stop\ndata: "+events[6]+"\n\n" {
		t.Errorf("message_stop: %+v %q", last, last.End)
	}
	if err := r.End(true); err != nil {
		t.Error(err)
	}
	// Cut before message_stop: the exchange sees no terminal event, and
	// End says truncated.
	r2 := messages.NewStreamReader()
	_, _ = r2.Read(nil, []byte(events[0]))
	if err := r2.End(false); custody.CodeOf(err) != custody.CodeStreamTruncated {
		t.Errorf("cut: %v", err)
	}
	// Out of order.
	r3 := messages.NewStreamReader()
	if _, err := r3.Read(nil, []byte(events[3])); custody.CodeOf(err) != custody.CodeStreamInconsistent {
		t.Errorf("a delta first: %v", err)
	}
}

// TestResponsesStreamReader: a Responses stream's usage is in its
// terminal event, which the exchange reads before it stops.
func TestResponsesStreamReader(t *testing.T) {
	r := responsesFront.NewStreamReader()
	created := `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","model":"m","status":"in_progress"}}`
	done := `{"type":"response.completed","sequence_number":1,"response":{"id":"resp_1","object":"response","model":"m","status":"completed","usage":{"input_tokens":9,"output_tokens":2,"input_tokens_details":{"cached_tokens":4}}}}`
	ev, err := r.Read(nil, []byte(created))
	if err != nil || ev.ID != "resp_1" || ev.Model != "m" {
		t.Fatalf("created: %+v %v", ev, err)
	}
	ev, err = r.Read(nil, []byte(done))
	if err != nil || !ev.Terminal || ev.Usage == nil || ev.Usage.Prompt != 9 || ev.Usage.Cached != 4 ||
		!strings.HasPrefix(string(ev.End), "event: response.completed\ndata: ") {
		t.Fatalf("completed: %+v %v", ev, err)
	}
	if err := r.End(true); err != nil {
		t.Error(err)
	}
}

// TestDialectWires: which providers a front passes through to.
func TestDialectWires(t *testing.T) {
	for _, tc := range []struct {
		front       Dialect
		prov        config.Provider
		passThrough bool
	}{
		{messages, config.Provider{Kind: config.KindAnthropic}, true},
		{messages, config.Provider{Kind: config.KindOpenAI}, false},
		{messages, config.Provider{Kind: config.KindSim, Responses: true}, false},
		{responsesFront, config.Provider{Kind: config.KindOpenAI, Responses: true}, true},
		{responsesFront, config.Provider{Kind: config.KindOpenAI}, false},
		{responsesFront, config.Provider{Kind: config.KindAnthropic}, false},
	} {
		wire, b := wireOf(tc.front, &tc.prov)
		if (b == nil) != tc.passThrough || (b == nil && wire != tc.front) || (b != nil && wire != openaiChat) {
			t.Errorf("%s to %+v: wire %s, bridge %v", tc.front.Endpoint(), tc.prov, wire.Endpoint(), b)
		}
	}
}

// TestNamedEvent: an event's name and its data's type are one value: a
// missing type is taken from the name (and written into the data the
// checks read and the client receives), a disagreement is
// stream_inconsistent, and the event is relayed named by its type.
func TestNamedEvent(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":3}}}`
	for _, tc := range []struct {
		name, name2, data, out string
		code                   custody.Code
	}{
		{name: "type only", data: start, out: "event: message_start\ndata: " + start + "\n\n"},
		{name: "name and type agree", name2: "message_start", data: start, out: "event: message_start\ndata: " + start + "\n\n"},
		{name: "type from the name", name2: "message_start", data: `{"message":{"id":"msg_1","model":"claude-x"}}`,
			out: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-x\"}}\n\n"},
		{name: "name disagrees", name2: "ping", data: start, code: custody.CodeStreamInconsistent},
		{name: "no type at all", data: `{"message":{}}`, code: custody.CodeStreamInconsistent},
		{name: "type with a newline", data: `{"type":"a\nb"}`, code: custody.CodeStreamInconsistent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := messages.NewStreamReader().Read([]byte(tc.name2), []byte(tc.data))
			if tc.code != "" {
				if custody.CodeOf(err) != tc.code {
					t.Fatalf("err = %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil || string(ev.Out) != tc.out {
				t.Fatalf("Out = %q (%v), want %q", ev.Out, err, tc.out)
			}
		})
	}
}

// TestEngineErrorEvent: an error an engine sends inside a 200 stream in
// OpenAI's shape (llama.cpp's /v1/messages and /v1/responses do) is the
// generation failing, upstream_error_as_success with the engine's words,
// not stream_inconsistent; events that only look alike are not errors.
func TestEngineErrorEvent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d       Dialect
		ev      string
		data    string
		code    custody.Code
		message string
	}{
		{"llama.cpp messages", messages, "error", `{"code":500,"message":"Failed to parse input at pos 3","type":"server_error"}`,
			custody.CodeUpstreamErrorAsSuccess, "Failed to parse input at pos 3"},
		{"llama.cpp responses", responsesFront, "", `{"error":{"code":500,"message":"Failed to parse input","type":"server_error"}}`,
			custody.CodeUpstreamErrorAsSuccess, "Failed to parse input"},
		{"named error without a message", messages, "error", `{"code":500}`, custody.CodeUpstreamErrorAsSuccess, ""},
		{"Anthropic's own error event", messages, "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			custody.CodeUpstreamErrorAsSuccess, ""},
		{"an error member beside a type", messages, "message_start", `{"type":"message_start","error":{"message":"x"}}`,
			custody.CodeStreamInconsistent, ""},
		{"another name, no type, no error", messages, "ping", `{"code":500}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.d.NewStreamReader().Read([]byte(tc.ev), []byte(tc.data))
			if tc.code == "" {
				if custody.CodeOf(err) == custody.CodeUpstreamErrorAsSuccess {
					t.Fatalf("err = %v, read as an engine's error", err)
				}
				return
			}
			if custody.CodeOf(err) != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			var said engineSaid
			if tc.message != "" && (!errors.As(err, &said) || string(said) != tc.message) {
				t.Errorf("the engine's words: %q, want %q", said, tc.message)
			}
		})
	}
}
