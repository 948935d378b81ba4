package anthropic

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/sse"
)

// seeds are the bodies of testdata/requests: valid requests and
// near-misses, one a file.
func seeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s", dir)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParseRequest: any body is parsed or refused with invalid_request,
// never a panic; what parses translates to valid chat JSON or is refused
// with a param named.
func FuzzParseRequest(f *testing.F) {
	seeds(f, "requests")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			var e *custody.Error
			if !errors.As(err, &e) || e.Code != custody.CodeInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		out, err := r.ToChat()
		if err != nil {
			var e *custody.Error
			if !errors.As(err, &e) || e.Code != custody.CodeInvalidRequest || e.Param == "" {
				t.Fatalf("translation error %v names no param", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("translation is not JSON: %s", out)
		}
		if _, err := ParseCountTokens(body); err != nil && !r.Stream {
			t.Fatalf("a request parses but its count_tokens does not: %v", err)
		}
	})
}

// FuzzStream: any sequence of upstream events (split on newlines) is
// validated without a panic; any chat chunks translate or fail cleanly.
func FuzzStream(f *testing.F) {
	seeds(f, "streams")
	f.Fuzz(func(t *testing.T, transcript []byte) {
		var v StreamValidator
		var tr StreamTranslator
		for _, line := range splitLines(transcript) {
			_ = v.Event(line)
			_, _ = tr.Chunk(line)
			if r, err := ParseResponse(line); err == nil {
				_ = r.Failure()
			}
			fromChatReadsTheChecks(t, line)
		}
		_ = v.End()
		_, _ = tr.End()
	})
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		out = append(out, b[:i])
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}

// FuzzStreamDelta: a content_block_delta event written by hand is, byte
// for byte, what encoding/json writes for it, whatever the text or the
// partial JSON holds (quotes, control bytes, <, >, &, invalid UTF-8).
func FuzzStreamDelta(f *testing.F) {
	for _, s := range []string{"", "Let ", "line\nnext \"quoted\" <b>&amp;</b>", "\u2028\x00\xff", `{"city":"Paris"}`} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, value string, index int) {
		for _, d := range []struct{ kind, key, name string }{{"text_delta", `"text":`, "text"}, {"input_json_delta", `"partial_json":`, "partial_json"}} {
			tr := StreamTranslator{index: index}
			tr.delta(d.kind, d.key, value)
			want := sse.AppendEvent(nil, "content_block_delta", struct {
				Type  string            `json:"type"`
				Index int               `json:"index"`
				Delta map[string]string `json:"delta"`
			}{"content_block_delta", index, map[string]string{"type": d.kind, d.name: value}})
			if string(tr.out) != string(want) {
				t.Fatalf("%s of %q:\nby hand:       %s\nencoding/json: %s", d.kind, value, tr.out, want)
			}
		}
	})
}

// fromChatReadsTheChecks: a chat answer FromChat translates says what
// custody's checks read in it (openai.ParseResponse), tool by tool and
// text for text; there is no second, looser reading.
func fromChatReadsTheChecks(t *testing.T, chat []byte) {
	out, err := FromChat(chat)
	if err != nil {
		return
	}
	c, err := openai.ParseResponse(chat)
	if err != nil {
		t.Fatalf("FromChat translated what the checks refuse (%v): %s", err, chat)
	}
	var m MessageBody
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	var text string
	var names []string
	for _, b := range m.Content {
		if b.Text != nil {
			text += *b.Text
		}
		if b.Type == "tool_use" {
			names = append(names, b.Name)
		}
	}
	want := c.Choices[0].Message
	if text != want.Content || len(names) != len(want.ToolCalls) {
		t.Fatalf("FromChat says %q %v, the checks read %q %d calls: %s", text, names, want.Content, len(want.ToolCalls), chat)
	}
	for i, tc := range want.ToolCalls {
		if names[i] != tc.Function.Name {
			t.Fatalf("tool %d: FromChat says %q, the checks read %q", i, names[i], tc.Function.Name)
		}
	}
}
