package openai

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addSeeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
}

func readAll(t testing.TB, in string, max int) ([]Event, error) {
	r := NewSSEReader(strings.NewReader(in), max)
	var out []Event
	for {
		e, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, Event{Raw: bytes.Clone(e.Raw), Data: bytes.Clone(e.Data), Comment: e.Comment})
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		name string
		in   string
		data []string
		err  error
		max  int
	}{
		{name: "two events", in: "data: {\"a\":1}\n\ndata: [DONE]\n\n", data: []string{`{"a":1}`, "[DONE]"}},
		{name: "crlf", in: "data: x\r\n\r\n", data: []string{"x"}},
		{name: "no space", in: "data:x\n\n", data: []string{"x"}},
		{name: "multi-line data", in: "data: a\ndata: b\n\n", data: []string{"a\nb"}},
		{name: "comment event", in: ": keep-alive\n\ndata: y\n\n", data: []string{"", "y"}},
		{name: "stray blank lines", in: "\n\n\ndata: y\n\n", data: []string{"y"}},
		{name: "event field kept in raw", in: "event: message\ndata: z\n\n", data: []string{"z"}},
		{name: "final event without blank line", in: "data: z\n", data: []string{"z"}},
		{name: "truncated", in: "event: x\n", err: io.ErrUnexpectedEOF},
		{name: "too large", in: "data: " + strings.Repeat("x", 100000) + "\n\n", max: 1000, err: ErrEventTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = 1 << 20
			}
			evs, err := readAll(t, tc.in, max)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != len(tc.data) {
				t.Fatalf("%d events, want %d", len(evs), len(tc.data))
			}
			var raw []byte
			for i, e := range evs {
				if string(e.Data) != tc.data[i] {
					t.Errorf("event %d data %q, want %q", i, e.Data, tc.data[i])
				}
				raw = append(raw, e.Raw...)
			}
			if !strings.HasSuffix(tc.in, string(raw)) {
				t.Errorf("raw bytes %q are not the input %q", raw, tc.in)
			}
		})
	}
}

// FuzzSSEReader: never panics, never returns more raw bytes than it read,
// and raw bytes are a verbatim part of the input, in order.
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: {\"id\":\"x\"}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(": c\r\n\r\ndata:a\ndata:b\n\n"))
	addSeeds(f, "testdata/streams")
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewSSEReader(bytes.NewReader(in), 4096)
		pos := 0
		for {
			e, err := r.Next()
			if err != nil {
				return
			}
			i := bytes.Index(in[pos:], e.Raw)
			if i < 0 {
				t.Fatalf("raw %q not found in input after %d", e.Raw, pos)
			}
			pos += i + len(e.Raw)
			if len(e.Raw) > 4096 {
				t.Fatalf("event of %d bytes over the limit", len(e.Raw))
			}
		}
	})
}

// TestSSEReaderMarksCutEvent: a final event without its blank line is
// delivered marked Cut, so that a stream cut inside an event is seen as
// truncated rather than as a bad chunk; whole events are never Cut.
func TestSSEReaderMarksCutEvent(t *testing.T) {
	r := NewSSEReader(strings.NewReader("data: a\n\ndata: {\"id\":"), 1<<20)
	e, err := r.Next()
	if err != nil || e.Cut {
		t.Fatalf("whole event: %v cut=%v", err, e.Cut)
	}
	e, err = r.Next()
	if err != nil || !e.Cut || string(e.Data) != `{"id":` {
		t.Fatalf("cut event: %v %+v", err, e)
	}
}

// TestAppendEventReadsBack: a named event written by AppendEvent is one
// event to the reader, its data the value's JSON.
func TestAppendEventReadsBack(t *testing.T) {
	b := AppendEvent(nil, "message_stop", map[string]string{"type": "message_stop"})
	if string(b) != "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n" {
		t.Fatalf("AppendEvent wrote %q", b)
	}
	r := NewSSEReader(bytes.NewReader(append(b, b...)), 1<<10)
	for range 2 {
		ev, err := r.Next()
		if err != nil || string(ev.Data) != `{"type":"message_stop"}` {
			t.Fatalf("read back %q, %v", ev.Data, err)
		}
	}
}
