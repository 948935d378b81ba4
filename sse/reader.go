package sse

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// ErrEventTooLarge is returned when the bytes of one event (every line
// read since the last event, comments and ignored fields included) exceed
// the reader's limit: an upstream that never ends a line or an event must
// not exhaust memory.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched server-sent event. Its slices are valid until
// the next call to Next.
type Event struct {
	// Name is the value of the event's last "event" field, "" when it had
	// none (the specification then dispatches it as "message").
	Name []byte
	// Data is the event's data lines joined with "\n".
	Data []byte
	// ID is the stream's last event ID as of this event (it carries over
	// from earlier events, as the specification says).
	ID []byte
	// Cut is set on a final event that the input ended inside of, before
	// its blank line. The specification discards such an event; it is
	// returned, marked, so that a stream cut short is told apart from a bad
	// event (it may be whole: "data: [DONE]" without its last newline).
	Cut bool
}

// Done reports whether this is the OpenAI end-of-stream marker.
func (e *Event) Done() bool { return string(e.Data) == "[DONE]" }

// Reader reads server-sent events from an upstream body as the
// specification's algorithm does.
type Reader struct {
	r   io.Reader
	err error // sticky error of r

	buf        []byte // read buffer; buf[start:end] is unread
	start, end int
	line       []byte // a line that spans refills of buf
	skipLF     bool   // the last line ended at CR: an LF next belongs to it
	begun      bool   // the byte order mark check is done

	max     int // bound on n
	n       int // bytes read since the last dispatch
	pending bool

	name, data, id []byte
	hasData        bool
	total          int64
	ev             Event
}

// NewReader reads events of at most maxEvent bytes from r.
func NewReader(r io.Reader, maxEvent int) *Reader {
	return &Reader{r: r, buf: make([]byte, 16<<10), max: maxEvent}
}

// Read is the number of bytes consumed from the input so far.
func (s *Reader) Read() int64 { return s.total }

// Next returns the next dispatched event, or io.EOF at a clean end of
// input, or io.ErrUnexpectedEOF if the input ended inside an event that
// had no data, or ErrEventTooLarge, or the underlying reader's error.
func (s *Reader) Next() (*Event, error) {
	if !s.begun {
		if err := s.skipBOM(); err != nil {
			return nil, err
		}
	}
	for {
		line, final, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.pending {
				if s.hasData {
					return s.dispatch(true), nil
				}
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if !utf8.Valid(line) {
			// The specification decodes the stream as UTF-8 with
			// replacement: custody reads (and relays) what a client
			// decodes, never the raw invalid bytes.
			line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
		}
		if len(line) == 0 {
			if final {
				continue
			}
			if s.hasData {
				return s.dispatch(false), nil
			}
			// No data: the specification resets the event type and
			// dispatches nothing.
			s.name, s.pending, s.n = s.name[:0], false, 0
			continue
		}
		s.pending = true
		s.field(line)
		if final {
			continue // the next readLine reports the end of input
		}
	}
}

// field processes one non-blank line.
func (s *Reader) field(line []byte) {
	if line[0] == ':' {
		return // a comment
	}
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "event":
		s.name = append(s.name[:0], value...)
	case "data":
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.id = append(s.id[:0], value...)
		}
	}
	// retry sets the client's reconnection time and unknown fields are
	// ignored: neither is part of an event custody relays.
}

func (s *Reader) dispatch(cut bool) *Event {
	s.ev = Event{Name: s.name, Data: s.data, ID: s.id, Cut: cut}
	// The next event reuses the buffers: the slices handed out are valid
	// until the next Next, which is when the buffers are written again.
	s.name, s.data = s.name[:0], s.data[:0]
	s.hasData, s.pending, s.n = false, false, 0
	return &s.ev
}

// skipBOM drops one leading UTF-8 byte order mark, however the input's
// first reads are split.
func (s *Reader) skipBOM() error {
	for s.end-s.start < 3 && s.err == nil {
		s.fill()
	}
	if s.end-s.start == 0 && s.err != nil && s.err != io.EOF {
		return s.err
	}
	s.begun = true
	if bytes.HasPrefix(s.buf[s.start:s.end], []byte("\xEF\xBB\xBF")) {
		s.start += 3
		s.total += 3
	}
	return nil
}

// fill reads more input after buf[end]; it moves the unread bytes to the
// front when the buffer is full.
func (s *Reader) fill() {
	if s.start > 0 && s.end == len(s.buf) {
		s.end = copy(s.buf, s.buf[s.start:s.end])
		s.start = 0
	}
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	s.err = io.ErrNoProgress
}

// readLine returns the next line without its terminator. final is set on
// an unterminated last line before the end of input; err is the input's
// error once every line is read.
func (s *Reader) readLine() (line []byte, final bool, err error) {
	s.line = s.line[:0]
	for {
		if s.start == s.end {
			if s.err != nil {
				if len(s.line) > 0 {
					return s.line, true, nil
				}
				return nil, false, s.err
			}
			s.start, s.end = 0, 0
			s.fill()
			continue
		}
		b := s.buf[s.start:s.end]
		if s.skipLF {
			s.skipLF = false
			if b[0] == '\n' {
				s.start++
				s.total++
				continue
			}
		}
		i := bytes.IndexByte(b, '\n')
		head := b
		if i >= 0 {
			head = b[:i]
		}
		if j := bytes.IndexByte(head, '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			if s.n += len(b); s.n > s.max {
				return nil, false, ErrEventTooLarge
			}
			s.line = append(s.line, b...)
			s.start, s.total = s.end, s.total+int64(len(b))
			continue
		}
		if s.n += i + 1; s.n > s.max {
			return nil, false, ErrEventTooLarge
		}
		s.skipLF = b[i] == '\r'
		s.start += i + 1
		s.total += int64(i + 1)
		if len(s.line) > 0 {
			s.line = append(s.line, b[:i]...)
			return s.line, false, nil
		}
		return b[:i], false, nil
	}
}
