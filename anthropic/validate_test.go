package anthropic

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

const (
	evStart      = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1,"cache_read_input_tokens":3}}}`
	evBlockStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evDelta      = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`
	evBlockStop  = `{"type":"content_block_stop","index":0}`
	evMsgDelta   = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`
	evStop       = `{"type":"message_stop"}`
	evPing       = `{"type":"ping"}`
)

func TestStreamValidator(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string
		code   custody.Code // "" for a clean stream
		atEnd  bool         // the failure shows at End
	}{
		{"clean", []string{evStart, evPing, evBlockStart, evDelta, evPing, evDelta, evBlockStop, evMsgDelta, evStop, evPing}, "", false},
		{"no blocks", []string{evStart, evMsgDelta, evStop}, "", false},
		{"two blocks", []string{evStart, evBlockStart, evBlockStop, strings.ReplaceAll(evBlockStart, `"index":0`, `"index":1`),
			strings.ReplaceAll(evBlockStop, `"index":0`, `"index":1`), evMsgDelta, evStop}, "", false},
		{"unknown event type", []string{evStart, `{"type":"content_block_citation"}`, evMsgDelta, evStop}, "", false},
		{"cut before message_stop", []string{evStart, evBlockStart, evDelta, evBlockStop, evMsgDelta}, custody.CodeStreamTruncated, true},
		{"cut inside a block", []string{evStart, evBlockStart, evDelta}, custody.CodeStreamTruncated, true},
		{"empty", nil, custody.CodeStreamTruncated, true},
		{"second message_start", []string{evStart, evBlockStart, strings.ReplaceAll(evStart, "msg_1", "msg_2")}, custody.CodeStreamInconsistent, false},
		{"delta before start", []string{evDelta}, custody.CodeStreamInconsistent, false},
		{"block index skipped", []string{evStart, strings.ReplaceAll(evBlockStart, `"index":0`, `"index":1`)}, custody.CodeStreamInconsistent, false},
		{"delta of another block", []string{evStart, evBlockStart, strings.ReplaceAll(evDelta, `"index":0`, `"index":2`)}, custody.CodeStreamInconsistent, false},
		{"block not closed", []string{evStart, evBlockStart, evDelta, evMsgDelta}, custody.CodeStreamInconsistent, false},
		{"message_stop without delta", []string{evStart, evStop}, custody.CodeStreamInconsistent, false},
		{"event after stop", []string{evStart, evMsgDelta, evStop, evBlockStart}, custody.CodeStreamInconsistent, false},
		{"not json", []string{evStart, `{"type":`}, custody.CodeStreamInconsistent, false},
		{"start without model", []string{`{"type":"message_start","message":{"id":"msg_1"}}`}, custody.CodeStreamInconsistent, false},
		{"error event", []string{evStart, evBlockStart, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, custody.CodeUpstreamErrorAsSuccess, false},
		{"no stop_reason", []string{evStart, `{"type":"message_delta","delta":{},"usage":{"output_tokens":2}}`}, custody.CodeUpstreamErrorAsSuccess, false},
		{"max_tokens with nothing written", []string{evStart, `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":0}}`}, custody.CodeUpstreamErrorAsSuccess, false},
		{"ambiguous model", []string{`{"type":"message_start","message":{"id":"msg_1","model":"shadow","Model":"m"}}`}, custody.CodeResponseAmbiguous, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v StreamValidator
			var err error
			for _, e := range tc.events {
				if err = v.Event([]byte(e)); err != nil {
					break
				}
			}
			if err == nil {
				err = v.End()
			} else if tc.atEnd {
				t.Fatalf("failed before the end: %v", err)
			}
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if custody.CodeOf(err) != tc.code {
				t.Errorf("got %v, want %s", err, tc.code)
			}
		})
	}
	var v StreamValidator
	for _, e := range []string{evStart, evBlockStart, evDelta, evBlockStop, evMsgDelta, evStop} {
		if err := v.Event([]byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	if v.ID != "msg_1" || v.Model != "m" || v.Usage.InputTokens != 5 || v.Usage.Prompt() != 8 || v.Usage.OutputTokens != 2 || v.StopReason != StopEndTurn {
		t.Errorf("read %+v", v)
	}
}

func TestParseResponse(t *testing.T) {
	r, err := ParseResponse([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"output_tokens":4}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "msg_1" || r.Model != "claude-x" || r.Text() != "ab" || r.Usage.Prompt() != 33 || r.Usage.Cached() != 20 {
		t.Errorf("read %+v", r)
	}
	if err := r.Failure(); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		body string
		code custody.Code
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"msg_1","type":"message","model":"m","content":[]}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"msg_1","type":"message","model":"m","content":[],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":0}}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"msg_1","type":"message","model":"m","content":[],"stop_reason":"exploded","usage":{"input_tokens":3,"output_tokens":1}}`, custody.CodeUpstreamErrorAsSuccess},
		{`{"id":"msg_1","type":"completion","model":"m","stop_reason":"end_turn"}`, custody.CodeUpstreamErrorAsSuccess},
	} {
		r, err := ParseResponse([]byte(tc.body))
		if err == nil {
			err = r.Failure()
		}
		if custody.CodeOf(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.body, err, tc.code)
		}
	}
	for _, amb := range []string{
		`{"id":"msg_1","type":"message","model":"a","model":"b"}`,
		`{"id":"msg_1","type":"message","model":"a","Model":"b"}`,
		`{"id":"msg_1","type":"message","model":"a","usage":{"input_tokens":1,"input_tokens":900}}`,
		`{"id":"msg_1","type":"message","mod\u0065l":"a"}`,
	} {
		if _, err := ParseResponse([]byte(amb)); custody.CodeOf(err) != custody.CodeResponseAmbiguous {
			t.Errorf("%s: got %v, want response_ambiguous", amb, err)
		}
	}
	if _, err := ParseResponse([]byte(`[]`)); custody.CodeOf(err) != custody.CodeUpstreamErrorAsSuccess {
		t.Errorf("an array: %v", err)
	}
}

func TestErrorBody(t *testing.T) {
	e := custody.Errorf(custody.CodeModelMismatch, "the upstream served model x")
	jsonEqual(t, ErrorBody(e), `{"type":"error","error":{"type":"api_error","message":"model_mismatch: the upstream served model x"}}`)
	bad := custody.Errorf(custody.CodeInvalidRequest, "thinking has no equivalent")
	bad.Param = "thinking"
	jsonEqual(t, ErrorBody(bad), `{"type":"error","error":{"type":"invalid_request_error","message":"invalid_request: thinking has no equivalent (param: thinking)"}}`)
	for status, typ := range map[int]string{401: "authentication_error", 403: "permission_error", 404: "not_found_error",
		413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error", 504: "api_error", 502: "api_error"} {
		if got := ErrorType(status); got != typ {
			t.Errorf("ErrorType(%d) = %s, want %s", status, got, typ)
		}
	}
	ev := string(ErrorEvent(e))
	if !strings.HasPrefix(ev, "event: error\ndata: {\"type\":\"error\"") || !strings.HasSuffix(ev, "\n\n") {
		t.Errorf("error event %q", ev)
	}
}

// The members the contract check reads in a tool_use (its name and
// input, a delta's partial_json, the stop_sequence) are checked members:
// a duplicate or a case variant is response_ambiguous, not one tool to
// custody and another to the client.
func TestToolUseMembersAmbiguous(t *testing.T) {
	for _, body := range []string{
		`{"type":"message","id":"m","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"weather","name":"rm_rf","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`,
		`{"type":"message","id":"m","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"weather","Input":{},"input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`,
		`{"type":"message","id":"m","model":"m","role":"assistant","content":[],"stop_reason":"stop_sequence","stop_sequence":"a","stop_sequence":"b","usage":{"input_tokens":1,"output_tokens":1}}`,
	} {
		if _, err := ParseResponse([]byte(body)); !IsAmbiguous(err) {
			t.Errorf("%s: %v, want response_ambiguous", body, err)
		}
	}
	var v StreamValidator
	for _, ev := range []string{evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"a","NAME":"b","input":{}}}`} {
		if err := v.Event([]byte(ev)); err != nil {
			if !IsAmbiguous(err) {
				t.Fatalf("%v, want response_ambiguous", err)
			}
			return
		}
	}
	t.Error("a tool_use block start with two names was accepted")
}
