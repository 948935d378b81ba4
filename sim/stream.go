package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// writeStream writes events as an SSE stream ending in [DONE], one token
// delay before each event after the first. Each chunk's created is the
// second it is sent, from the server's clock, as llama.cpp stamps it (a
// stream that spans a second boundary rises). Under stream-interleave
// every third chunk after the first carries another stream's id and
// created; under response-swap the previous stream's transcript is sent
// instead; under stream-cut the stream ends after its last chunk (the
// usage chunk, when asked for) without [DONE].
func (s *Server) writeStream(c *call, kind string, head envelope, events [][]byte) error {
	other := s.otherStream(streamHead{id: head.ID, created: head.Created})
	if c.faults[FaultStreamInterleave] {
		for i := 1; i < len(events); i += 3 {
			events[i] = reHead(events[i], other)
		}
	}
	stamp := createdStamper(head.Created)
	done := []byte("data: [DONE]\n\n")
	if c.faults[FaultStreamCut] {
		done = nil
	}
	delayed := s.cfg.TokenDelay > 0
	var transcript []byte
	for _, e := range events {
		if !delayed {
			e = stamp(e, s.now())
		}
		transcript = append(transcript, "data: "...)
		transcript = append(transcript, e...)
		transcript = append(transcript, "\n\n"...)
	}
	transcript = append(transcript, done...)
	out := s.swapBody(kind, transcript, c.faults[FaultResponseSwap])
	swapped := len(out) > 0 && len(transcript) > 0 && &out[0] != &transcript[0]

	c.w.Header().Set("Content-Type", "text/event-stream")
	c.w.Header().Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	flusher, _ := c.w.(http.Flusher)
	if swapped || !delayed {
		_, err := c.w.Write(out)
		return wroteStream(err)
	}
	for i := 0; i < len(events)+1; i++ {
		if i > 0 {
			if err := sleep(c.r.Context(), s.cfg.TokenDelay); err != nil {
				return wroteStream(err)
			}
		}
		line := done
		if i < len(events) {
			line = append(append([]byte("data: "), stamp(events[i], s.now())...), "\n\n"...)
		}
		if len(line) == 0 {
			continue
		}
		if _, err := c.w.Write(line); err != nil {
			return wroteStream(err)
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	return nil
}

// createdStamper returns a function that sets an encoded chunk's created,
// written as "created":<created>, to the second of now. Chunks that carry
// another created (an interleaved stream's) are left as they are.
func createdStamper(created int64) func(event []byte, now time.Time) []byte {
	old := []byte(`"created":` + strconv.FormatInt(created, 10) + ",")
	return func(event []byte, now time.Time) []byte {
		sec := now.Unix()
		if sec == created {
			return event
		}
		i := bytes.Index(event, old)
		if i < 0 {
			return event
		}
		out := make([]byte, 0, len(event)+4)
		out = append(out, event[:i]...)
		out = append(out, `"created":`...)
		out = strconv.AppendInt(out, sec, 10)
		out = append(out, ',')
		return append(out, event[i+len(old):]...)
	}
}

// now is the simulator's clock.
func (s *Server) now() time.Time {
	if s.cfg.Clock != nil {
		return s.cfg.Clock()
	}
	return time.Now()
}

// wroteStream drops errors after the stream started: the status is sent
// and the client is gone.
func wroteStream(error) error { return nil }

// reHead replaces the id and created of an encoded chunk.
func reHead(event []byte, h streamHead) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(event, &m) != nil {
		return event
	}
	if _, ok := m["id"]; !ok {
		return event
	}
	m["id"], _ = json.Marshal(h.id)
	m["created"], _ = json.Marshal(h.created)
	b, err := json.Marshal(m)
	if err != nil {
		return event
	}
	return b
}
