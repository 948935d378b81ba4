package eval

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseSuite reads every field of the sample suite.
func TestParseSuite(t *testing.T) {
	cases, digest, err := Load("testdata/support.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if digest == [32]byte{} || len(cases) != 5 {
		t.Fatalf("%d cases, digest %x", len(cases), digest)
	}
	c := cases[0]
	if c.ID != "codes-in-order" || c.Line != 1 || c.Request.Messages[0] != (Message{"user", "Repeat the codes in order: alpha1111 bravo2222"}) ||
		c.Request.MaxTokens != 16 || c.Request.Temperature == nil || *c.Request.Temperature != 0 || c.Assert.Regex == nil || len(c.Assert.Contains) != 2 {
		t.Errorf("case 1: %+v", c)
	}
	if g := cases[1]; len(g.Request.Messages) != 2 || g.Assert.Contains[0] != "zulu9999" || g.Assert.NotContains[0] != "ERROR" || g.Assert.MaxLatency != 30*time.Second {
		t.Errorf("case 2: %+v", g)
	}
	if j := cases[2]; j.Line != 4 || j.Assert.JSONSchema == nil || *j.Request.Seed != 7 || *j.Request.TopP != 1 {
		t.Errorf("case 3 (after a blank line): %+v", j)
	}
	if w := cases[3]; w.Assert.ToolCall == nil || w.Assert.ToolCall.Name != "get_weather" || w.Assert.ToolCall.Arguments == nil ||
		!strings.HasPrefix(string(w.Request.Tools), `[{"type":"function"`) || string(w.Request.ToolChoice) != `"auto"` {
		t.Errorf("case 4: %+v", w)
	}
	body, err := cases[3].Request.Body("sim-1")
	if err != nil || !strings.Contains(string(body), `"model":"sim-1"`) || !strings.Contains(string(body), `"tool_choice":"auto"`) {
		t.Errorf("body %s %v", body, err)
	}
}

// TestParseRefusesBadLines: each bad line is named FILE:LINE with its
// reason, all of them at once.
func TestParseRefusesBadLines(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"not json", `{"id": "a",`, "a case must be a JSON object"},
		{"not an object", `["a"]`, "must be a JSON object"},
		{"unknown member", `{"id": "a", "prompt": "p", "asert": {}}`, `unknown member "asert"`},
		{"case variant", `{"id": "a", "ID": "b", "prompt": "p", "assert": {"contains": "x"}}`, `"ID" appears twice`},
		{"duplicate", `{"id": "a", "prompt": "p", "prompt": "q", "assert": {"contains": "x"}}`, `"prompt" appears twice`},
		{"no id", `{"prompt": "p", "assert": {"contains": "x"}}`, "id: required"},
		{"bad id", `{"id": "a b", "prompt": "p", "assert": {"contains": "x"}}`, `id "a b": letters`},
		{"null", `{"id": "a", "prompt": null, "assert": {"contains": "x"}}`, "prompt is null"},
		{"both", `{"id": "a", "prompt": "p", "messages": [{"role": "user", "content": "c"}], "assert": {"contains": "x"}}`, "not both"},
		{"neither", `{"id": "a", "assert": {"contains": "x"}}`, "messages or prompt is required"},
		{"bad role", `{"id": "a", "messages": [{"role": "root", "content": "c"}], "assert": {"contains": "x"}}`, "messages[0].role"},
		{"content type", `{"id": "a", "messages": [{"role": "user", "content": 3}], "assert": {"contains": "x"}}`, "messages[0].content"},
		{"no assert", `{"id": "a", "prompt": "p"}`, "assert is required"},
		{"empty assert", `{"id": "a", "prompt": "p", "assert": {}}`, "at least one assertion"},
		{"bad regex", `{"id": "a", "prompt": "p", "assert": {"regex": "("}}`, "assert.regex:"},
		{"schema keyword", `{"id": "a", "prompt": "p", "assert": {"json_schema": {"type": "object", "patternProps": {}}}}`, "patternProps: keyword not supported"},
		{"schema type", `{"id": "a", "prompt": "p", "assert": {"json_schema": {"type": "int"}}}`, `unknown type "int"`},
		{"tool name", `{"id": "a", "prompt": "p", "assert": {"tool_call": {"arguments": {}}}}`, "tool_call.name: required"},
		{"latency", `{"id": "a", "prompt": "p", "assert": {"max_latency": "soon"}}`, "max_latency"},
		{"temperature", `{"id": "a", "prompt": "p", "temperature": 3, "assert": {"contains": "x"}}`, "temperature: want a number in [0, 2]"},
		{"max_tokens", `{"id": "a", "prompt": "p", "max_tokens": 0, "assert": {"contains": "x"}}`, "max_tokens"},
		{"empty contains", `{"id": "a", "prompt": "p", "assert": {"contains": [""]}}`, "assert.contains[0]"},
		{"tools", `{"id": "a", "prompt": "p", "tools": {}, "assert": {"contains": "x"}}`, "tools: want a non-empty array"},
		{"utf8", "{\"id\": \"a\", \"prompt\": \"\xff\", \"assert\": {\"contains\": \"x\"}}", "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := `{"id": "ok", "prompt": "p", "assert": {"contains": "x"}}`
			_, err := Parse("s.jsonl", []byte(good+"\n\n"+tc.line+"\n"))
			if !errors.Is(err, ErrSuite) || !strings.Contains(err.Error(), "s.jsonl:3: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want s.jsonl:3: ...%s", err, tc.want)
			}
		})
	}
	_, err := Parse("s.jsonl", []byte(`{"id": "a", "prompt": "p", "assert": {"contains": "x"}}`+"\n"+`{"id": "a", "prompt": "q", "assert": {"contains": "x"}}`+"\n"+`{"id": "b"}`))
	if err == nil || !strings.Contains(err.Error(), `s.jsonl:2: id "a" is also the id of line 1`) || !strings.Contains(err.Error(), "s.jsonl:3: ") {
		t.Errorf("every bad line at once: %v", err)
	}
	if _, err := Parse("e.jsonl", []byte("\n\n")); err == nil || !strings.Contains(err.Error(), "no cases") {
		t.Errorf("empty suite: %v", err)
	}
	if _, err := Parse("l.jsonl", []byte(strings.Repeat("x", maxLineSize+1))); err == nil || !strings.Contains(err.Error(), "l.jsonl:1: line longer") {
		t.Errorf("long line: %v", err)
	}
	var many strings.Builder
	for i := range MaxCases + 1 {
		many.WriteString(`{"id": "c` + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + strconv.Itoa(i) + `", "prompt": "p", "assert": {"contains": "x"}}` + "\n")
	}
	if _, err := Parse("m.jsonl", []byte(many.String())); err == nil || !strings.Contains(err.Error(), "at most 256") {
		t.Errorf("too many cases: %v", err)
	}
}
