package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrEventTooLarge is returned when one SSE event exceeds the reader's
// limit: an upstream that never ends a line must not exhaust memory.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one server-sent event. Its slices are valid until the next
// call to Next.
type Event struct {
	// Raw is the exact bytes of the event, blank line included, so that
	// custody relays what the upstream sent without re-encoding.
	Raw []byte
	// Data is the event's data, multi-line data joined with "\n".
	Data []byte
	// Comment is set when the event held only comment lines.
	Comment bool
	// Cut is set on a final event that the input ended inside of, before
	// its blank line: it may be whole ("data: [DONE]" without the last
	// newline) or the first half of one.
	Cut bool
}

// Done reports whether this is the OpenAI end-of-stream marker.
func (e *Event) Done() bool { return string(e.Data) == "[DONE]" }

// SSEReader reads server-sent events from an upstream body.
type SSEReader struct {
	r       *bufio.Reader
	max     int
	raw     []byte
	data    []byte
	started bool
}

// NewSSEReader reads events of at most maxEvent bytes from r.
func NewSSEReader(r io.Reader, maxEvent int) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, 16<<10), max: maxEvent}
}

// Next returns the next event, or io.EOF at a clean end of input, or
// io.ErrUnexpectedEOF if the input ended inside an event.
func (s *SSEReader) Next() (*Event, error) {
	s.raw, s.data = s.raw[:0], s.data[:0]
	hasData, hasComment := false, false
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && len(s.raw) > 0 {
				if hasData {
					// A final event without its blank line: deliver it.
					return &Event{Raw: s.raw, Data: s.data, Cut: true}, nil
				}
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		s.raw = append(s.raw, line...)
		body := trimEOL(line)
		if len(body) == 0 {
			if !hasData && !hasComment {
				s.raw = s.raw[:0] // stray blank line between events
				continue
			}
			return &Event{Raw: s.raw, Data: s.data, Comment: !hasData}, nil
		}
		if body[0] == ':' {
			hasComment = true
			continue
		}
		field, value, _ := bytes.Cut(body, []byte{':'})
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if string(field) == "data" {
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
		}
		// event:, id:, retry: and unknown fields are relayed in Raw and
		// otherwise ignored: OpenAI streams do not use them.
	}
}

// readLine returns one line including its terminator (LF or CRLF), or
// the unterminated rest at EOF.
func (s *SSEReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long line: accumulate it, bounded by the event limit.
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(buf)+len(s.raw) > s.max {
				return nil, ErrEventTooLarge
			}
			line, err = s.r.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if len(line)+len(s.raw) > s.max {
		return nil, ErrEventTooLarge
	}
	if err == io.EOF && len(line) > 0 {
		return line, nil
	}
	if err != nil {
		return nil, err
	}
	return line, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// DoneEvent is the end-of-stream marker custody writes.
var DoneEvent = []byte("data: [DONE]\n\n")

// ReceiptComment is the SSE comment that carries a stream's receipt id.
func ReceiptComment(id string) []byte {
	return fmt.Appendf(nil, ": custody-receipt %s\n\n", id)
}

// VerdictComment is the SSE comment that carries a stream's final verdict
// and checks: ": custody-verdict <verdict> checks=<checks>".
func VerdictComment(verdict, checks string) []byte {
	return fmt.Appendf(nil, ": custody-verdict %s checks=%s\n\n", verdict, checks)
}

// DataEvent frames payload as one SSE data event.
func DataEvent(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+8)
	out = append(out, "data: "...)
	out = append(out, payload...)
	return append(out, '\n', '\n')
}

// AppendEvent appends one named server-sent event, "event: name" and v
// as its JSON data, as the Messages and Responses dialects write them.
// v is custody's own value: one that does not encode is a bug.
func AppendEvent(dst []byte, name string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sse: encoding event %s: %v", name, err))
	}
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, b...)
	return append(dst, "\n\n"...)
}
