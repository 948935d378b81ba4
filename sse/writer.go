package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The canonical framing: every event custody relays is written by these
// functions and nothing else reaches a client. Each line ends with LF;
// data holding "\n" is written as one data line per line, so that the
// reader gives back exactly the data written.

// Done is the OpenAI end-of-stream marker custody writes.
var Done = []byte("data: [DONE]\n\n")

// AppendData appends data as one unnamed event.
func AppendData(dst, data []byte) []byte {
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		dst = append(dst, "data: "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
		if !more {
			break
		}
		data = rest
	}
	return append(dst, '\n')
}

// Data is data framed as one unnamed event.
func Data(data []byte) []byte { return AppendData(make([]byte, 0, len(data)+8), data) }

// AppendNamed appends one event named name ("event: name") with data.
// name must be a ValidName.
func AppendNamed(dst []byte, name string, data []byte) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, '\n')
	return AppendData(dst, data)
}

// ValidName reports whether name can be written as an event name and read
// back as itself: not empty, and without CR or LF.
func ValidName(name string) bool {
	return name != "" && !bytesHasCRLF(name)
}

func bytesHasCRLF(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return true
		}
	}
	return false
}

// AppendEvent appends one named event with v's JSON as its data, as the
// Messages and Responses dialects write their own events. v is custody's
// own value: one that does not encode is a bug.
func AppendEvent(dst []byte, name string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sse: encoding event %s: %v", name, err))
	}
	return AppendNamed(dst, name, b)
}

// ReceiptComment is the comment that carries a stream's receipt id. It
// comes first of custody's comments: the response commitment covers the
// bytes before it (verify.StripReceiptLine).
func ReceiptComment(id string) []byte {
	return fmt.Appendf(nil, ": custody-receipt %s\n\n", id)
}

// VerdictComment is the comment that carries a stream's final verdict and
// checks: ": custody-verdict <verdict> checks=<checks>".
func VerdictComment(verdict, checks string) []byte {
	return fmt.Appendf(nil, ": custody-verdict %s checks=%s\n\n", verdict, checks)
}
