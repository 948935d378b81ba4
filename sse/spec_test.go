package sse

import (
	"strings"
	"unicode/utf8"
)

// specEvent is one event as the specification's algorithm dispatches it.
type specEvent struct {
	Type, Data, LastEventID string
}

// specParse is the WHATWG HTML "Server-sent events" parsing algorithm
// (§9.2.6 "Interpreting an event stream"), written out plainly over the
// whole input and independently of Reader, for the differential fuzzer to
// hold Reader against. It decodes UTF-8 with replacement, drops one
// leading BOM, splits lines at CRLF, LF or CR, and discards what follows
// the last line terminator.
func specParse(in []byte) []specEvent {
	text := []rune(string(in)) // invalid bytes become U+FFFD
	if len(text) > 0 && text[0] == '\uFEFF' {
		text = text[1:]
	}
	var (
		out             []specEvent
		data, eventType strings.Builder
		idBuffer        string
	)
	dispatch := func() {
		lastEventIDValue := idBuffer
		if data.Len() == 0 {
			eventType.Reset()
			return
		}
		d := data.String()
		d = strings.TrimSuffix(d, "\n")
		typ := eventType.String()
		if typ == "" {
			typ = "message"
		}
		out = append(out, specEvent{Type: typ, Data: d, LastEventID: lastEventIDValue})
		data.Reset()
		eventType.Reset()
	}
	process := func(line string) {
		if line == "" {
			dispatch()
			return
		}
		if line[0] == ':' {
			return
		}
		field, value := line, ""
		if i := strings.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			eventType.Reset()
			eventType.WriteString(value)
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.ContainsRune(value, 0) {
				idBuffer = value
			}
		case "retry":
			// Sets the reconnection time when all ASCII digits: no event.
		}
	}
	var line []rune
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			process(string(line))
			line = line[:0]
		case '\n':
			process(string(line))
			line = line[:0]
		default:
			line = append(line, c)
		}
	}
	// End of input: a line without its terminator and an event without
	// its blank line are discarded.
	return out
}

// collapseReplacement folds each run of U+FFFD into one: the reader
// replaces a run of invalid bytes with one U+FFFD where the decoder above
// writes one per byte; either way the client receives valid UTF-8 that
// custody wrote.
func collapseReplacement(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, utf8.RuneError) {
		return s
	}
	var b strings.Builder
	prev := false
	for _, r := range s {
		if r == utf8.RuneError {
			if prev {
				continue
			}
			prev = true
		} else {
			prev = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
