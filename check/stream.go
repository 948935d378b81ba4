package check

import (
	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

// Stream checks that every chunk of one stream belongs to it: one id, one
// model, and a created time that never goes back. Chunks of two streams
// interleaved on one connection (a desynchronised multiplexer, a shared
// decode batch that mixed up its outputs) disagree on these. The zero
// value is ready; the first chunk sets the identity.
//
// created is not constant on every engine: llama.cpp stamps each chunk
// with the second it was sent, so a stream longer than a second rises.
// It may rise by at most MaxCreatedRise over the whole stream; a chunk
// older than the one before it is another stream's.
type Stream struct {
	ID      string
	Model   string
	Created int64 // of the first chunk
	Last    int64 // created of the latest chunk
	started bool
}

// MaxCreatedRise bounds, in seconds, how far created may rise within one
// stream: a stream that lasts longer than this is not a real one.
const MaxCreatedRise = 3600

// Chunk checks one chunk against the stream's identity.
func (s *Stream) Chunk(c *openai.Response) error {
	if c.Error != nil {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream sent an error inside a 200 stream")
	}
	if !s.started {
		s.ID, s.Model, s.Created, s.Last, s.started = c.ID, c.Model, c.Created, c.Created, true
	}
	switch {
	case c.ID != s.ID:
		return custody.Errorf(custody.CodeStreamInconsistent, "a chunk carries another stream's id")
	case c.Model != s.Model:
		return custody.Errorf(custody.CodeStreamInconsistent, "a chunk carries model %q in a stream of %q", c.Model, s.Model)
	case c.Created < s.Last:
		return custody.Errorf(custody.CodeStreamInconsistent, "a chunk's created time (%d) is earlier than the chunk before it (%d)", c.Created, s.Last)
	case c.Created-s.Created > MaxCreatedRise:
		return custody.Errorf(custody.CodeStreamInconsistent, "a chunk's created time is %d s after the stream's first", c.Created-s.Created)
	}
	s.Last = c.Created
	if err := Usage(c.Usage); err != nil {
		return err
	}
	for _, ch := range c.Choices {
		if err := FinishReason(ch.FinishReason); err != nil {
			return err
		}
	}
	return nil
}

// End checks what a complete stream must have had: at least one chunk,
// and usage when custody asked the upstream for it.
func (s *Stream) End(sawUsage, usageRequired bool) error {
	if !s.started {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream stream ended without a chunk")
	}
	if usageRequired && !sawUsage {
		return custody.Errorf(custody.CodeStreamInconsistent, "the upstream stream ended without the usage custody asked for")
	}
	return nil
}
