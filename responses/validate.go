package responses

import (
	"encoding/json"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/strict"
)

// StreamValidator checks the events of one Responses stream: each has a
// sequence_number greater than the one before (or, when the first event
// has none, as llama.cpp's /v1/responses sends them, none has one); the
// first is
// response.created; every event that carries the Response carries the
// same id, and the same model once one named it (llama.cpp's names it only
// in the terminal event); output items are added at indexes 0, 1, 2...
// (an output_index may be left out, as llama.cpp does); there
// is exactly one terminal event (response.completed, .incomplete or
// .failed) and nothing after it but a tolerated [DONE]. Violations are
// stream_inconsistent; an error event or a failed Response is
// upstream_error_as_success; an end before the terminal event is
// stream_truncated (End).
type StreamValidator struct {
	ID       string
	Model    string
	Status   string // of the terminal event's Response
	Response *Response

	seq        int64
	unnumbered bool // the first event had no sequence_number
	started    bool
	terminal   bool
	items      int
}

type streamEvent struct {
	Type        string    `json:"type"`
	Sequence    *int64    `json:"sequence_number"`
	Response    *Response `json:"response"`
	OutputIndex *int      `json:"output_index"`
}

func inconsistent(format string, args ...any) error {
	return custody.Errorf(custody.CodeStreamInconsistent, "Responses stream: "+format, args...)
}

// Event checks one event's data.
func (v *StreamValidator) Event(data []byte) error {
	if string(data) == "[DONE]" {
		if !v.terminal {
			return inconsistent("[DONE] before the terminal event")
		}
		return nil
	}
	var e streamEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return inconsistent("an event is not a JSON object")
	}
	if err := strict.Check(data, eventMembers); err != nil {
		return custody.Errorf(custody.CodeResponseAmbiguous, "upstream event: ambiguous members: %s", err)
	}
	if e.Type == "error" {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream sent an error event inside a 200 stream")
	}
	switch {
	case !v.started && e.Sequence == nil:
		v.unnumbered = true
	case v.unnumbered != (e.Sequence == nil):
		return inconsistent("%s: some events have a sequence_number and some none", e.Type)
	case e.Sequence == nil:
	case v.started && *e.Sequence <= v.seq:
		return inconsistent("sequence_number %d after %d", *e.Sequence, v.seq)
	default:
		v.seq = *e.Sequence
	}
	if v.terminal {
		return inconsistent("%s after the terminal event", e.Type)
	}
	if !v.started {
		if e.Type != "response.created" || e.Response == nil || e.Response.ID == "" {
			return inconsistent("the stream does not begin with response.created")
		}
		v.started = true
		v.ID, v.Model = e.Response.ID, e.Response.Model
	}
	if r := e.Response; r != nil {
		if r.ID != v.ID {
			return inconsistent("an event carries another response's id")
		}
		// An event may leave the model out (llama.cpp names it only in
		// the terminal Response); the first to name it fixes it.
		switch {
		case v.Model == "":
			v.Model = r.Model
		case r.Model != "" && r.Model != v.Model:
			return inconsistent("an event carries model %q in a stream of %q", r.Model, v.Model)
		}
	}
	switch e.Type {
	case "response.output_item.added":
		// llama.cpp leaves output_index out; one it gives must be next.
		if e.OutputIndex != nil && *e.OutputIndex != v.items {
			return inconsistent("output item added at index %s, want %d", idx(e.OutputIndex), v.items)
		}
		v.items++
	case "response.completed", "response.incomplete", "response.failed":
		if e.Response == nil {
			return inconsistent("%s without its Response", e.Type)
		}
		v.terminal = true
		v.Status, v.Response = e.Response.Status, e.Response
		want := map[string]string{"response.completed": StatusCompleted, "response.incomplete": StatusIncomplete,
			"response.failed": StatusFailed}[e.Type]
		if v.Status != want {
			return inconsistent("%s with status %q", e.Type, v.Status)
		}
		return v.Response.Failure()
	default:
		if e.OutputIndex != nil && *e.OutputIndex >= v.items {
			return inconsistent("%s for output item %d, which was not added", e.Type, *e.OutputIndex)
		}
	}
	return nil
}

// Done reports whether the terminal event was seen.
func (v *StreamValidator) Done() bool { return v.terminal }

// End checks the end of the upstream's stream.
func (v *StreamValidator) End() error {
	if !v.terminal {
		return custody.Errorf(custody.CodeStreamTruncated, "the upstream's Responses stream ended before its terminal event")
	}
	return nil
}

func idx(i *int) string {
	if i == nil {
		return "none"
	}
	b, _ := json.Marshal(*i)
	return string(b)
}
