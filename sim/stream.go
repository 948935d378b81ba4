package sim

import (
	"encoding/json"
	"net/http"
)

// writeStream writes events as an SSE stream ending in [DONE], one token
// delay before each event after the first. Under stream-interleave every
// third chunk after the first carries another stream's id and created;
// under response-swap the previous stream's transcript is sent instead.
func (s *Server) writeStream(c *call, kind string, head envelope, events [][]byte) error {
	other := s.otherStream(streamHead{id: head.ID, created: head.Created})
	if c.faults[FaultStreamInterleave] {
		for i := 1; i < len(events); i += 3 {
			events[i] = reHead(events[i], other)
		}
	}
	var transcript []byte
	for _, e := range events {
		transcript = append(transcript, "data: "...)
		transcript = append(transcript, e...)
		transcript = append(transcript, "\n\n"...)
	}
	transcript = append(transcript, "data: [DONE]\n\n"...)
	out := s.swapBody(kind, transcript, c.faults[FaultResponseSwap])
	swapped := &out[0] != &transcript[0]

	c.w.Header().Set("Content-Type", "text/event-stream")
	c.w.Header().Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	flusher, _ := c.w.(http.Flusher)
	if swapped || s.cfg.TokenDelay == 0 {
		_, err := c.w.Write(out)
		return wroteStream(err)
	}
	for i := 0; i < len(events)+1; i++ {
		if i > 0 {
			if err := sleep(c.r.Context(), s.cfg.TokenDelay); err != nil {
				return wroteStream(err)
			}
		}
		line := []byte("data: [DONE]\n\n")
		if i < len(events) {
			line = append(append([]byte("data: "), events[i]...), "\n\n"...)
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
