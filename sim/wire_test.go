package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tickingClock advances one second at every reading.
func tickingClock(start int64) func() time.Time {
	var n atomic.Int64
	return func() time.Time { return time.Unix(start+n.Add(1), 0) }
}

// TestStreamCreatedPerChunk: each chunk carries the second it was sent,
// as llama.cpp stamps it, plain or with a token delay.
func TestStreamCreatedPerChunk(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		ts := newTestServer(t, Config{Clock: tickingClock(1_800_000_000), TokenDelay: delay})
		r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", true, "count the ships"))
		if len(r.events) < 3 || !r.done {
			t.Fatalf("delay %v: %d events, done %v", delay, len(r.events), r.done)
		}
		for i := 1; i < len(r.events); i++ {
			if r.events[i].Created <= r.events[i-1].Created || r.events[i].ID != r.events[0].ID {
				t.Fatalf("delay %v: chunk %d created %d after %d", delay, i, r.events[i].Created, r.events[i-1].Created)
			}
		}
	}
}

// TestStreamCut: the stream ends after the usage chunk, with no [DONE].
func TestStreamCut(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		ts := newTestServer(t, Config{Faults: []Fault{FaultStreamCut}, TokenDelay: delay})
		r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", true, "hi"))
		if r.done || bytes.Contains(r.body, []byte("[DONE]")) {
			t.Fatalf("delay %v: stream-cut sent [DONE]: %s", delay, r.body)
		}
		if last := r.events[len(r.events)-1]; len(r.events) < 2 || !strings.Contains(string(r.body), `"usage"`) || last.Choices == nil || len(last.Choices) != 0 {
			t.Fatalf("delay %v: the stream does not end with its usage chunk: %s", delay, r.body)
		}
		if p := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, "hi")); p.status != 200 || len(p.resp.Choices) != 1 {
			t.Errorf("stream-cut changed a plain response: %s", p.body)
		}
	}
}

// TestAmbiguousModel: the body names the model twice; encoding/json
// (case-insensitive, last wins) reads the honest one, an exact reader the
// shadow.
func TestAmbiguousModel(t *testing.T) {
	ts := newTestServer(t, Config{Faults: []Fault{FaultAmbiguousModel}})
	for _, stream := range []bool{false, true} {
		r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", stream, "hi"))
		if r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
		if !bytes.Contains(r.body, []byte(`"model":"sim-shadow-1","Model":"sim-1"`)) {
			t.Fatalf("stream %v: no ambiguous model: %s", stream, r.body)
		}
		model := r.resp.Model
		if stream {
			model = r.events[0].Model
		}
		if model != "sim-1" {
			t.Errorf("encoding/json reads %q, want the honest sim-1", model)
		}
		if !stream {
			var exact map[string]json.RawMessage
			json.Unmarshal(r.body, &exact)
			if string(exact["model"]) != `"sim-shadow-1"` {
				t.Errorf("exact reader sees %s", exact["model"])
			}
		}
	}
	r := post(t, ts, "/v1/embeddings", map[string]any{"model": "sim-1", "input": "hi"})
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"Model":"sim-1"`)) {
		t.Errorf("embeddings: %d %s", r.status, r.body)
	}
}
