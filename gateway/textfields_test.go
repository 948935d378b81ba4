package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestMessagesTexts: every text a Messages client reads, in a body or a
// stream event, whatever the member's case or how often it is written.
func TestMessagesTexts(t *testing.T) {
	tests := []struct {
		name, data string
		stream     bool
		want       []Text
	}{
		{"text delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi"}}`, true,
			[]Text{{Place: Place{Field: "text", Choice: 2}, S: "hi"}}},
		{"thinking delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`, true,
			[]Text{{Place: Place{Field: "thinking"}, S: "hmm"}}},
		{"input json delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`, true,
			[]Text{{Place: Place{Field: "partial_json", Choice: 1}, S: `{"a":`}}},
		{"tool use start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"k":["v",2]}}}`, true,
			[]Text{{Place: Place{Field: "name"}, S: "f", Whole: true}, {Place: Place{Field: "input"}, S: "k", Whole: true},
				{Place: Place{Field: "input"}, S: "v", Whole: true}, {Place: Place{Field: "input"}, S: "2", Whole: true}}},
		{"case variant and duplicate", `{"type":"content_block_delta","index":0,"delta":{"TEXT":"a","text":"b","text":"c"}}`, true,
			[]Text{{Place: Place{Field: "text"}, S: "a"}, {Place: Place{Field: "text"}, S: "b"}, {Place: Place{Field: "text"}, S: "c"}}},
		{"body", `{"type":"message","content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"text","text":"y"}]}`, false,
			[]Text{{Place: Place{Field: "thinking"}, S: "x", Whole: true}, {Place: Place{Field: "text"}, S: "y", Whole: true}}},
		{"not JSON", `{"text":"a"`, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := messagesTexts(nil, []byte(tt.data), tt.stream); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestResponsesTexts: a Responses delta continues its part; the texts
// of other events are whole.
func TestResponsesTexts(t *testing.T) {
	got := responsesTexts(nil, []byte(`{"type":"response.function_call_arguments.delta","output_index":3,"item_id":"fc","delta":"{\"a"}`), true)
	want := []Text{{Place: Place{Field: "response.function_call_arguments.delta", Choice: 3}, S: `{"a`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("delta: %+v", got)
	}
	got = responsesTexts(nil, []byte(`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":2,"delta":"x"}`), true)
	if want := (Place{Field: "response.reasoning_summary_text.delta", Index: 2}); len(got) != 1 || got[0].Place != want {
		t.Errorf("summary delta: %+v", got)
	}
	got = responsesTexts(nil, []byte(`{"output":[{"type":"function_call","name":"f","arguments":"{}"},{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}]},`+
		`{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]}`), false)
	var ss []string
	for _, t := range got {
		ss = append(ss, t.S)
	}
	if want := []string{"f", "{}", "s", "no"}; !reflect.DeepEqual(ss, want) {
		t.Errorf("body texts %q, want %q", ss, want)
	}
}

// FuzzJSONTexts: on any input jsonTexts neither panics nor hangs, reads
// what the json.Decoder walk it replaced read (sameTextsAsTokens), and on
// valid JSON it reports at least every string that encoding/json reads
// under a member whose name (case-folded) is one of the keys: what a
// client decoding the same bytes may show.
func FuzzJSONTexts(f *testing.F) {
	for _, dir := range []string{"testdata/texts", "../anthropic/testdata/streams", "../responses/testdata/streams"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					f.Add([]byte(d))
				} else if json.Valid(sc.Bytes()) {
					f.Add(bytes.Clone(sc.Bytes()))
				}
			}
		}
	}
	f.Add([]byte(`{"type":"content_block_delta","index":0,"delta":{"Text":"a","text":"b"}}`))
	f.Add([]byte(`{"input":{"a":[1,{"b":"c"}],"d":null},"name":"\u0045"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sameTextsAsTokens(t, b)
		var got []string
		_, err := jsonTexts(b, messagesTextKeys, messagesWholeKeys, func(_, s string) { got = append(got, s) })
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if err != nil && !strings.Contains(err.Error(), "nested too deep") {
			t.Fatalf("valid JSON %q: %v", b, err)
		}
		if err != nil {
			return
		}
		var want []string
		var walk func(v any, key string, whole bool)
		walk = func(v any, key string, whole bool) {
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					if whole {
						want = append(want, k)
						walk(e, key, true)
						continue
					}
					nk, nw := match(messagesTextKeys, k), false
					if m := match(messagesWholeKeys, k); m != "" {
						nk, nw = m, true
					}
					walk(e, nk, nw)
				}
			case []any:
				for _, e := range v {
					walk(e, key, whole)
				}
			case string:
				if key != "" || whole {
					want = append(want, v)
				}
			}
		}
		walk(v, "", false)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Fatalf("%q: %q read by encoding/json is not a text (got %q)", b, w, got)
			}
		}
	})
}

// TestDecodeArguments: a whole tool call's arguments are also scanned as
// the application decodes them, escapes undone.
func TestDecodeArguments(t *testing.T) {
	in := []Text{{Place: Place{Field: "tool_calls.function.arguments"}, S: `{"k\u0065y":"\u0073ecret","n":[1]}`},
		{Place: Place{Field: "content"}, S: `\u0073`}}
	got := decodeArguments(in, true)
	var ss []string
	for _, t := range got[2:] {
		ss = append(ss, t.S)
	}
	if want := []string{"key", "secret", "n", "1"}; !reflect.DeepEqual(ss, want) {
		t.Errorf("decoded %q, want %q", ss, want)
	}
	if got := decodeArguments(in[:1], false); len(got) != 1 {
		t.Errorf("a stream's argument delta was decoded: %+v", got)
	}
}

// textsOfTokens is jsonTexts as it was, on json.Decoder's tokens (the
// walk decodeArguments still takes): the reference jsonTexts is held to.
func textsOfTokens(data []byte, keys, whole []string, fn func(key, s string)) (int, error) {
	w := tokenWalker{dec: json.NewDecoder(bytes.NewReader(data)), keys: keys, whole: whole, fn: fn, index: -1}
	w.dec.UseNumber()
	if err := w.value("", false, 0); err != nil {
		return -1, err
	}
	if _, err := w.dec.Token(); err == nil {
		return -1, errors.New("data after the value")
	}
	return w.index, nil
}

// sameTextsAsTokens fails t unless jsonTexts reads from b, with the
// Messages and the Responses keys, what textsOfTokens reads: the same
// texts in the same order under the same keys and the same index, or an
// error where it errs (its texts then unused).
func sameTextsAsTokens(t *testing.T, b []byte) {
	t.Helper()
	if !json.Valid(b) {
		// Not JSON: jsonTexts errs (the walk errs on most such input,
		// not all: it read one value and took a syntax error after it
		// for the end). Its callers never pass it any: the body or
		// event was decoded first.
		if _, err := jsonTexts(b, messagesTextKeys, messagesWholeKeys, func(string, string) {}); err == nil {
			t.Fatalf("%q: not JSON, no error", b)
		}
		return
	}
	for _, k := range [][2][]string{{messagesTextKeys, messagesWholeKeys}, {responsesTextKeys, nil}} {
		var got, want []string
		gi, gerr := jsonTexts(b, k[0], k[1], func(key, s string) { got = append(got, key+"="+s) })
		wi, werr := textsOfTokens(b, k[0], k[1], func(key, s string) { want = append(want, key+"="+s) })
		if (gerr != nil) != (werr != nil) {
			t.Fatalf("%q: error %v, the decoder's %v", b, gerr, werr)
		}
		if gerr == nil && (gi != wi || !slices.Equal(got, want)) {
			t.Fatalf("%q: index %d texts %q, the decoder's %d %q", b, gi, got, wi, want)
		}
	}
}

// TestJSONTextsAsTokens: jsonTexts reads what the decoder walk read, on
// bodies and events of both wires and on keys and values in every
// spelling.
func TestJSONTextsAsTokens(t *testing.T) {
	for _, b := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"Text":"a","text":"b"}}`,
		`{"input":{"a":[1,{"b":"c"}],"d":null,"e":-1.5e3,"f":true},"name":"\u0045"}`,
		`{"index":"7","content":[{"type":"text","TEXT":"x\n\"y\"","cited_text":"é\ud83d\ude00"}]}`,
		`{"index":12,"delta":{"partial_json":"{\"city\": \"Oslo\"}"}}`,
		`{"INDEX":3,"index":-2}`, `{"index":1.5}`, `{"index":99999999999999999999}`,
		`[{"text":"a"},{"input":[["k",{"\u006b":1}]]}]`, `"text"`, `12`, `null`, ` { } `, `{"x":{"text":{"text":"deep"}}}`,
		`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hel"}`,
		`{"output":[{"type":"function_call","name":"f","arguments":"{\"a\":1}"},{"content":[{"text":"t","refusal":"r"}]}]}`,
		"{\"text\":\"\xff\xfe\"}", `{"text":"a"} x`, `{"text":"a"`, `{"text":}`, ``, `{"Ѕtext":"homoglyph"}`,
	} {
		sameTextsAsTokens(t, []byte(b))
	}
}

// BenchmarkJSONTexts reads the texts of a Messages answer (a text and a
// tool_use block) and of a stream's text delta, against the decoder walk
// it replaced (same run).
func BenchmarkJSONTexts(b *testing.B) {
	for _, body := range []struct{ name, data string }{
		{"answer", `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Let me look that up for you, one moment please."},{"type":"tool_use","id":"tu","name":"tool_0","input":{"city":"Oslo","days":3}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":40}}`},
		{"delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" one moment"}}`},
	} {
		for _, v := range []struct {
			name  string
			texts func([]byte, []string, []string, func(string, string)) (int, error)
		}{{"walker", jsonTexts}, {"decoder", textsOfTokens}} {
			b.Run(body.name+"/"+v.name, func(b *testing.B) {
				data := []byte(body.data)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := v.texts(data, messagesTextKeys, messagesWholeKeys, func(string, string) {}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
