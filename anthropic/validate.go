package anthropic

import (
	"encoding/json"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/strict"
)

// StreamValidator checks the events of one Messages stream, in order:
//
//	message_start (content_block_start content_block_delta* content_block_stop)* message_delta message_stop
//
// with block indexes 0, 1, 2... in order, ping allowed anywhere and any
// unknown event type tolerated (Anthropic adds event types). It records
// the stream's id, model, usage and stop_reason. Order violations are
// stream_inconsistent; an error event, or a stop_reason that means
// failure, is upstream_error_as_success; an end before message_stop is
// stream_truncated (End).
type StreamValidator struct {
	ID         string
	Model      string
	Usage      Usage
	StopReason string

	state int // see the states below
	index int // the open block's index, or the next one's
}

const (
	stBefore  = iota // nothing yet
	stMessage        // message_start seen, no block open
	stBlock          // a block is open
	stDelta          // message_delta seen
	stDone           // message_stop seen
)

type event struct {
	Type    string    `json:"type"`
	Index   *int      `json:"index"`
	Message *Response `json:"message"`
	Usage   *struct {
		InputTokens              *int `json:"input_tokens"`
		OutputTokens             *int `json:"output_tokens"`
		CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
		CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	Delta *struct {
		StopReason *string `json:"stop_reason"`
	} `json:"delta"`
}

func inconsistent(format string, args ...any) error {
	return custody.Errorf(custody.CodeStreamInconsistent, "Messages stream: "+format, args...)
}

// Event checks one event's data (the JSON after "data:").
func (v *StreamValidator) Event(data []byte) error {
	var e event
	if err := json.Unmarshal(data, &e); err != nil {
		return inconsistent("an event is not a JSON object")
	}
	if err := strict.Check(data, responseMembers); err != nil {
		return custody.Errorf(custody.CodeResponseAmbiguous, "upstream event: ambiguous members: %s", err)
	}
	if e.Type == "ping" {
		return nil
	}
	if v.state == stDone {
		return inconsistent("%s after message_stop", e.Type)
	}
	switch e.Type {
	case "error":
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream sent an error event inside a 200 stream")
	case "message_start":
		if v.state != stBefore {
			return inconsistent("a second message_start")
		}
		if e.Message == nil || e.Message.ID == "" || e.Message.Model == "" {
			return inconsistent("message_start without a message id and model")
		}
		v.ID, v.Model = e.Message.ID, e.Message.Model
		if e.Message.Usage != nil {
			v.Usage = e.Message.Usage.counts()
		}
		v.state = stMessage
	case "content_block_start":
		if v.state != stMessage {
			return inconsistent("content_block_start %s", v.where())
		}
		if e.Index == nil || *e.Index != v.index {
			return inconsistent("content_block_start has index %s, want %d", idx(e.Index), v.index)
		}
		v.state = stBlock
	case "content_block_delta", "content_block_stop":
		if v.state != stBlock {
			return inconsistent("%s %s", e.Type, v.where())
		}
		if e.Index == nil || *e.Index != v.index {
			return inconsistent("%s has index %s in block %d", e.Type, idx(e.Index), v.index)
		}
		if e.Type == "content_block_stop" {
			v.state = stMessage
			v.index++
		}
	case "message_delta":
		if v.state != stMessage {
			return inconsistent("message_delta %s", v.where())
		}
		if u := e.Usage; u != nil {
			set(&v.Usage.InputTokens, u.InputTokens)
			set(&v.Usage.OutputTokens, u.OutputTokens)
			if u.CacheReadInputTokens != nil {
				v.Usage.CacheReadInputTokens = u.CacheReadInputTokens
			}
			if u.CacheCreationInputTokens != nil {
				v.Usage.CacheCreationInputTokens = u.CacheCreationInputTokens
			}
		}
		if e.Delta == nil || e.Delta.StopReason == nil {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's message_delta has no stop_reason")
		}
		v.StopReason = *e.Delta.StopReason
		if err := stopFailure(v.StopReason, &v.Usage); err != nil {
			return err
		}
		v.state = stDelta
	case "message_stop":
		if v.state != stDelta {
			return inconsistent("message_stop %s", v.where())
		}
		v.state = stDone
	default:
		if v.state == stBefore {
			return inconsistent("%q before message_start", e.Type)
		}
	}
	return nil
}

// Done reports whether message_stop was seen.
func (v *StreamValidator) Done() bool { return v.state == stDone }

// Started reports whether message_start was seen.
func (v *StreamValidator) Started() bool { return v.state != stBefore }

// End checks the end of the upstream's stream.
func (v *StreamValidator) End() error {
	if v.state != stDone {
		return custody.Errorf(custody.CodeStreamTruncated, "the upstream's Messages stream ended before message_stop")
	}
	return nil
}

func (v *StreamValidator) where() string {
	switch v.state {
	case stBefore:
		return "before message_start"
	case stMessage:
		return "outside a content block"
	case stBlock:
		return "inside an open content block"
	case stDelta:
		return "after message_delta"
	}
	return "after message_stop"
}

func set(dst *int, v *int) {
	if v != nil {
		*dst = *v
	}
}

func idx(i *int) string {
	if i == nil {
		return "none"
	}
	b, _ := json.Marshal(*i)
	return string(b)
}
