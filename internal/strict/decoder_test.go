package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// checkDecoder is Check as it was when it walked json.Decoder's tokens:
// the reference the byte walker is held to (TestCheckAsDecoder,
// FuzzCheck).
func checkDecoder(body []byte, m Members) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	w := decoderWalker{d: d, b: body}
	err := w.value(m, "")
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type decoderWalker struct {
	d *json.Decoder
	b []byte
}

func (w *decoderWalker) value(m Members, path string) error {
	tok, err := w.d.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return w.object(m, path)
	case json.Delim('['):
		for k := 0; w.d.More(); k++ {
			if err := w.value(m, path+"["+strconv.Itoa(k)+"]"); err != nil {
				return err
			}
		}
		_, err := w.d.Token() // ']'
		return err
	}
	return nil
}

func (w *decoderWalker) object(m Members, path string) error {
	var seen map[string]bool
	for w.d.More() {
		before := w.d.InputOffset()
		tok, err := w.d.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		raw := w.b[before:w.d.InputOffset()]
		name, checked := "", false
		for n := range m {
			if strings.EqualFold(key, n) {
				name, checked = n, true
				break
			}
		}
		var inner Members
		if checked {
			switch {
			case key != name:
				return &Error{path, fmt.Sprintf("member %q differs from %q only in case", key, name)}
			case bytes.IndexByte(raw, '\\') >= 0:
				return &Error{path, fmt.Sprintf("member %q is written with escapes", name)}
			case seen[name]:
				return &Error{path, fmt.Sprintf("duplicate member %q", name)}
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[name] = true
			inner = m[name]
		}
		if inner == nil {
			var raw json.RawMessage
			if err := w.d.Decode(&raw); err != nil {
				return err
			}
			continue
		}
		if err := w.value(inner, join(path, name)); err != nil {
			return err
		}
	}
	_, err := w.d.Token() // '}'
	return err
}

// checkBodies are JSON bodies for the walker and the decoder to agree on.
var checkBodies = []string{
	`{"model":"a","messages":[{"role":"user","content":[{"type":"text"}]}],"x":{"model":1,"model":2}}`,
	`{"model":"a","other":"mod\u0065l","Other":1,"other":2}`,
	`[{"model":"a","model":"b"}]`,
	`"x"`, `12`, `null`, ` [ ] `, `{}`, ` { } `, `[[{"model":1,"model":2}]]`, `[1,"a",[{"messages":{"role":1,"ROLE":2}}]]`,
	`{"model":"a","model":"b"}`,
	`{"model":"a","MODEL":"b"}`,
	`{"mod\u0065l":"a"}`,
	`{"Mod\u0065l":"a"}`,
	`{"\u006dodel":"a","model":"b"}`,
	`{"messages":[{"role":"user"},{"role":"a","Role":"b"}]}`,
	`{"messages":[{"content":[{"type":"a","type":"b"}]}]}`,
	`{"messages":{"role":"a","role":"b"}}`,
	`{"messages":[{"role":"a"},{"role":"a","role":"b"}]}`,
	`{"messages":[{"role":"a"},{"content":[{},{"x":[1,{"type":2}]},{"type":"a","TYPE":"b"}]}]}`,
	"{\"mod\u212ael\":1}", // the Kelvin sign folds to k... not to o; no match
	"{\"messages\":[{\"\u212a\":1}],\"ſ\":2}",
	"{ \"model\" : \"a\\\"b\" , \"messages\" : [ { \"role\" : \"x\\\\\" } , { \"role\" : 1e5 , \"role\" : true } ] }",
	`{"x":"\\","model":"}","messages":[{"role":"]"},{"role":"[","role":"{"}]}`,
	"{\"mod\xffel\":1,\"model\":2,\"model\":3}",
	`{"a":{"b":[{"model":1}]},"messages":[[{"role":1,"role":2}]]}`,
}

var checkMembers = Members{"model": nil, "messages": {"role": nil, "content": {"type": nil}}, "k": nil, "s": nil}

func TestCheckAsDecoder(t *testing.T) {
	// Names past ASCII: none of custody's, but Check takes any.
	wide := Members{"é": {"k": nil}, "model": nil}
	bodies := append([]string{`{"é":{"k":1},"model":2}`, `{"é":{"k":1},"\u00e9":2}`, `{"É":1}`, `{"é":[{"K":1}]}`,
		`{"é":1,"é":2}`, "{\"\u212a\":1,\"é\":{\"\u212a\":1}}"}, checkBodies...)
	for _, m := range []Members{checkMembers, wide} {
		for _, b := range bodies {
			if !json.Valid([]byte(b)) {
				t.Fatalf("not JSON: %s", b)
			}
			got, want := Check([]byte(b), m), checkDecoder([]byte(b), m)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("Check(%s) = %v, the decoder's %v", b, got, want)
			}
		}
	}
}

// BenchmarkCheck is Check on a Messages answer of a text and a tool_use
// block, against the decoder walk it replaced (same run, same body).
func BenchmarkCheck(b *testing.B) {
	body := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Let me look that up for you, one moment please."},{"type":"tool_use","id":"tu","name":"tool_0","input":{"city":"Oslo","days":3}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":40}}`)
	m := Members{"type": nil, "id": nil, "model": nil, "role": nil, "stop_reason": nil, "stop_sequence": nil,
		"usage":   {"input_tokens": nil, "output_tokens": nil},
		"content": {"type": nil, "text": nil, "name": nil, "input": nil}}
	for _, v := range []struct {
		name  string
		check func([]byte, Members) error
	}{{"walker", Check}, {"decoder", checkDecoder}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.check(body, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// replaceTopDecoder is ReplaceTop as it was when it walked json.Decoder's
// tokens: the reference for TestReplaceTopAsDecoder and FuzzCheck.
func replaceTopDecoder(body []byte, name string, value []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return body
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return body
		}
		start := d.InputOffset()
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return body
		}
		if tok == name {
			end := d.InputOffset()
			vs := start + int64(bytes.Index(body[start:end], raw))
			out := make([]byte, 0, len(body)+len(value))
			out = append(out, body[:vs]...)
			out = append(out, value...)
			return append(out, body[vs+int64(len(raw)):]...)
		}
	}
	return body
}

func TestReplaceTopAsDecoder(t *testing.T) {
	for _, b := range append(checkBodies, `{"x":[1,{"model":2}],"model" : 1.5e3 }`, `{"model":{"a":"}"},"x":1}`,
		`{"m\u006fdel":"a"}`, `{"x":"model","model":[]}`, ` {} `, `{"model":null}`, `{"Model":1,"model":2}`) {
		got, want := ReplaceTop([]byte(b), "model", []byte(`"up"`)), replaceTopDecoder([]byte(b), "model", []byte(`"up"`))
		if !bytes.Equal(got, want) {
			t.Errorf("ReplaceTop(%s) = %s, the decoder's %s", b, got, want)
		}
	}
}

// BenchmarkReplaceTop rewrites the model of a Messages request with two
// turns and a tool, against the decoder walk it replaced.
func BenchmarkReplaceTop(b *testing.B) {
	body := []byte(`{"model":"claude-x","max_tokens":200,"system":"You are terse.","messages":[{"role":"user","content":"What is the weather in Oslo?"},{"role":"assistant","content":[{"type":"text","text":"Checking."}]}],"tools":[{"name":"weather","description":"the weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"stream":false}`)
	for _, v := range []struct {
		name    string
		replace func([]byte, string, []byte) []byte
	}{{"walker", ReplaceTop}, {"decoder", replaceTopDecoder}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.replace(body, "model", []byte(`"up"`))
			}
		})
	}
}
