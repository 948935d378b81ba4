package sse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// chunked reads in at most n bytes a call, so that lines, CRLF pairs and
// the byte order mark are split across reads.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}

type got struct {
	events []specEvent
	cut    *specEvent
	err    error
}

func readAll(in []byte, chunk, max int) got {
	r := NewReader(&chunked{b: in, n: chunk}, max)
	var g got
	for {
		e, err := r.Next()
		if err != nil {
			if err != io.EOF {
				g.err = err
			}
			return g
		}
		typ := string(e.Name)
		if typ == "" {
			typ = "message"
		}
		se := specEvent{Type: typ, Data: string(e.Data), LastEventID: string(e.ID)}
		if e.Cut {
			g.cut = &se
			continue
		}
		if g.cut != nil {
			g.err = errors.New("an event after a cut event")
			return g
		}
		g.events = append(g.events, se)
	}
}

func TestReader(t *testing.T) {
	cases := []struct {
		name string
		in   string
		data []string
		err  error
		max  int
	}{
		{name: "two events", in: "data: {\"a\":1}\n\ndata: [DONE]\n\n", data: []string{`{"a":1}`, "[DONE]"}},
		{name: "crlf", in: "data: x\r\n\r\n", data: []string{"x"}},
		{name: "lone cr", in: "data: x\r\rdata: y\r\r", data: []string{"x", "y"}},
		{name: "cr hides an event in a comment", in: ":\r\rdata: {\"hidden\":1}\r\rdata: {\"real\":1}\n\n", data: []string{`{"hidden":1}`, `{"real":1}`}},
		{name: "bom", in: "\xEF\xBB\xBFdata: x\n\n", data: []string{"x"}},
		{name: "second bom is a field name", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n", data: nil},
		{name: "no space", in: "data:x\n\n", data: []string{"x"}},
		{name: "two spaces keep one", in: "data:  x\n\n", data: []string{" x"}},
		{name: "multi-line data", in: "data: a\ndata: b\n\n", data: []string{"a\nb"}},
		{name: "field without colon", in: "data\ndata\n\n", data: []string{"\n"}},
		{name: "empty data is an event", in: "data:\n\n", data: []string{""}},
		{name: "comment only", in: ": keep-alive\n\ndata: y\n\n", data: []string{"y"}},
		{name: "stray blank lines", in: "\n\n\ndata: y\n\n", data: []string{"y"}},
		{name: "unknown fields and retry", in: "retry: 10\nfoo: bar\nid: 7\ndata: z\n\n", data: []string{"z"}},
		{name: "final event without blank line", in: "data: z\n", data: []string{"z"}},
		{name: "truncated", in: "event: x\n", err: io.ErrUnexpectedEOF},
		{name: "too large", in: "data: " + strings.Repeat("x", 100000) + "\n\n", max: 1000, err: ErrEventTooLarge},
		{name: "too many comment lines", in: strings.Repeat(": k\n", 1000), max: 1000, err: ErrEventTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = 1 << 20
			}
			for _, chunk := range []int{1, 2, 3, 7, 1 << 20} {
				g := readAll([]byte(tc.in), chunk, max)
				if tc.err != nil {
					if !errors.Is(g.err, tc.err) {
						t.Fatalf("chunk %d: err = %v, want %v", chunk, g.err, tc.err)
					}
					continue
				}
				if g.err != nil {
					t.Fatalf("chunk %d: %v", chunk, g.err)
				}
				evs := g.events
				if g.cut != nil {
					evs = append(evs, *g.cut)
				}
				if len(evs) != len(tc.data) {
					t.Fatalf("chunk %d: %d events %q, want %d", chunk, len(evs), evs, len(tc.data))
				}
				for i, e := range evs {
					if e.Data != tc.data[i] {
						t.Errorf("chunk %d: event %d data %q, want %q", chunk, i, e.Data, tc.data[i])
					}
				}
			}
		})
	}
}

// TestReaderFields: event names, the last event id carrying over, and an
// id holding NUL ignored, as the specification says.
func TestReaderFields(t *testing.T) {
	g := readAll([]byte("event: a\nid: 1\ndata: x\n\ndata: y\n\nid: 2\x00\nevent: b\ndata: z\n\n"), 5, 1<<10)
	want := []specEvent{{"a", "x", "1"}, {"message", "y", "1"}, {"b", "z", "1"}}
	if g.err != nil || len(g.events) != 3 {
		t.Fatalf("%v %q", g.err, g.events)
	}
	for i := range want {
		if g.events[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, g.events[i], want[i])
		}
	}
}

// TestReaderMarksCutEvent: a final event without its blank line is
// delivered marked Cut, so that a stream cut inside an event is seen as
// truncated rather than as a bad chunk; whole events are never Cut.
func TestReaderMarksCutEvent(t *testing.T) {
	r := NewReader(strings.NewReader("data: a\n\ndata: {\"id\":"), 1<<20)
	e, err := r.Next()
	if err != nil || e.Cut {
		t.Fatalf("whole event: %v cut=%v", err, e.Cut)
	}
	e, err = r.Next()
	if err != nil || !e.Cut || string(e.Data) != `{"id":` {
		t.Fatalf("cut event: %v %+v", err, e)
	}
}

func addSeeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
}

// FuzzReaderAgainstSpec holds Reader against specParse, the
// specification's algorithm written out plainly: the same events, the
// same names, data and ids, however the input is split into reads; a Cut
// event only last, and only where the specification dispatches nothing
// more.
func FuzzReaderAgainstSpec(f *testing.F) {
	f.Add([]byte("data: {\"id\":\"x\"}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(": c\r\n\r\ndata:a\ndata:b\n\n"))
	f.Add([]byte(":\r\rdata: {\"x\":1}\r\r\xEF\xBB\xBFdata\r\n\r"))
	addSeeds(f, "testdata/streams")
	f.Fuzz(func(t *testing.T, in []byte) {
		want := specParse(in)
		for _, chunk := range []int{1, 3, 4096} {
			g := readAll(in, chunk, len(in)+1)
			if g.err != nil && g.err != io.ErrUnexpectedEOF {
				t.Fatalf("chunk %d: %v", chunk, g.err)
			}
			if len(g.events) != len(want) {
				t.Fatalf("chunk %d: %d events %q, the specification %d %q", chunk, len(g.events), g.events, len(want), want)
			}
			for i := range want {
				w, e := want[i], g.events[i]
				w.Data, w.Type, w.LastEventID = collapseReplacement(w.Data), collapseReplacement(w.Type), collapseReplacement(w.LastEventID)
				if e != w {
					t.Fatalf("chunk %d: event %d = %q, the specification %q", chunk, i, e, w)
				}
			}
		}
	})
}

// FuzzWriterRoundTrip: what the canonical writer frames, the reader (and
// so the specification) reads back as exactly that data and name.
func FuzzWriterRoundTrip(f *testing.F) {
	f.Add("message_start", []byte(`{"type":"message_start"}`))
	f.Add("", []byte("a\n\nb"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if bytes.IndexByte(data, '\r') >= 0 || !utf8.Valid(data) || !utf8.ValidString(name) {
			return // not data the reader hands out
		}
		var framed []byte
		if ValidName(name) {
			framed = AppendNamed(nil, name, data)
		} else {
			name = ""
			framed = Data(data)
		}
		framed = append(framed, ReceiptComment("r")...)
		for _, chunk := range []int{1, 4096} {
			g := readAll(framed, chunk, len(framed)+1)
			if g.err != nil || len(g.events) != 1 {
				t.Fatalf("%q read back as %q, %v", framed, g.events, g.err)
			}
			typ := name
			if typ == "" {
				typ = "message"
			}
			if g.events[0].Data != string(data) || g.events[0].Type != typ {
				t.Fatalf("%q read back as %q", framed, g.events[0])
			}
			if s := specParse(framed); len(s) != 1 || s[0] != g.events[0] {
				t.Fatalf("the specification reads %q as %q", framed, s)
			}
		}
	})
}
