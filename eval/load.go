package eval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/custody-gateway/custody/internal/jsonschema"
)

// Limits of a suite file: a run is one ledger leaf, which names every
// case, and a suite is meant to be small (every run is billed).
const (
	MaxCases    = 256
	maxLineSize = 1 << 20
	maxIDLen    = 64
	maxErrors   = 20 // reported at once; the rest are counted
)

// ErrSuite is wrapped by every error of a suite file.
var ErrSuite = errors.New("bad evaluation suite")

var caseID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

var roles = []string{"system", "developer", "user", "assistant", "tool"}

// Load reads and parses the suite file at path.
func Load(path string) ([]Case, [32]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, [32]byte{}, fmt.Errorf("%w: %w", ErrSuite, err)
	}
	cases, err := Parse(path, data)
	return cases, sha256.Sum256(data), err
}

// Parse reads a suite: JSONL, one case a line, blank lines ignored. Every
// bad line is reported at once as FILE:LINE: reason. A case is an object
// with exactly these members:
//
//	id           required; letters, digits and . _ : - (at most 64), unique
//	messages     [{"role": "system|developer|user|assistant|tool", "content": "..."}], or
//	prompt       "..." (one user message); exactly one of the two
//	tools        an array (OpenAI tools), passed as written
//	tool_choice  passed as written
//	temperature, top_p   numbers; seed: a whole number
//	max_tokens   a positive whole number
//	assert       required, at least one of:
//	  contains      "..." or ["...", ...]: each must appear in the answer
//	  not_contains  "..." or ["...", ...]: none may appear
//	  regex         an RE2 expression that must match
//	  equals        the whole answer, surrounding white space aside
//	  json_schema   a JSON Schema (the subset of Schema) the answer, as JSON, meets
//	  tool_call     {"name": "...", "arguments": SCHEMA?}: a call of that tool
//	  max_latency   "2s": the whole call, custody's checks included
func Parse(file string, data []byte) ([]Case, error) {
	var cases []Case
	var errs []string
	more := 0
	bad := func(line int, format string, args ...any) {
		if len(errs) < maxErrors {
			errs = append(errs, fmt.Sprintf("%s:%d: %s", file, line, fmt.Sprintf(format, args...)))
		} else {
			more++
		}
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLineSize)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		c, err := parseCase(text)
		if err != nil {
			bad(line, "%v", err)
			continue
		}
		c.Line = line
		if first, dup := seen[c.ID]; dup {
			bad(line, "id %q is also the id of line %d", c.ID, first)
			continue
		}
		seen[c.ID] = line
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			bad(line+1, "line longer than %d bytes", maxLineSize)
		} else {
			bad(line+1, "%v", err)
		}
	}
	if len(errs) == 0 && len(cases) == 0 {
		bad(max(line, 1), "no cases")
	}
	if len(cases) > MaxCases {
		bad(line, "%d cases; a suite holds at most %d", len(cases), MaxCases)
	}
	if len(errs) > 0 {
		if more > 0 {
			errs = append(errs, fmt.Sprintf("%s: and %d more", file, more))
		}
		return nil, fmt.Errorf("%w:\n%s", ErrSuite, strings.Join(errs, "\n"))
	}
	return cases, nil
}

// members decodes a JSON object into its members, refusing duplicates
// and members not in known (exact spelling).
func members(raw []byte, what string, known ...string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s must be a JSON object", what)
	}
	var unknown []string
	for k, v := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		} else if string(v) == "null" {
			return nil, fmt.Errorf("%s: %s is null (leave it out instead)", what, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("%s: unknown member %q (want %s)", what, jsonschema.Truncate(unknown[0], 40), strings.Join(known, ", "))
	}
	return m, nil
}

func parseCase(line []byte) (Case, error) {
	var c Case
	if !utf8.Valid(line) {
		return c, errors.New("not valid UTF-8")
	}
	if err := noDuplicates(line, true); err != nil {
		return c, err
	}
	m, err := members(line, "a case", "id", "messages", "prompt", "tools", "tool_choice", "temperature", "top_p", "seed", "max_tokens", "assert")
	if err != nil {
		return c, err
	}
	if err := strictString(m["id"], &c.ID); err != nil || c.ID == "" {
		return c, errors.New("id: required, a string")
	}
	if len(c.ID) > maxIDLen || !caseID.MatchString(c.ID) {
		return c, fmt.Errorf("id %q: letters, digits and . _ : - only, at most %d", jsonschema.Truncate(c.ID, maxIDLen), maxIDLen)
	}
	fail := func(format string, args ...any) (Case, error) {
		return c, fmt.Errorf("case %s: %s", c.ID, fmt.Sprintf(format, args...))
	}
	r := &c.Request
	switch msgs, prompt := m["messages"], m["prompt"]; {
	case msgs != nil && prompt != nil:
		return fail("give messages or prompt, not both")
	case prompt != nil:
		var p string
		if err := strictString(prompt, &p); err != nil || p == "" {
			return fail("prompt: want a non-empty string")
		}
		r.Messages = []Message{{Role: "user", Content: p}}
	case msgs != nil:
		var list []json.RawMessage
		if err := json.Unmarshal(msgs, &list); err != nil || len(list) == 0 {
			return fail("messages: want a non-empty array of {role, content}")
		}
		for i, raw := range list {
			mm, err := members(raw, fmt.Sprintf("messages[%d]", i), "role", "content")
			if err != nil {
				return fail("%v", err)
			}
			var msg Message
			if strictString(mm["role"], &msg.Role) != nil || !slices.Contains(roles, msg.Role) {
				return fail("messages[%d].role: want one of %s", i, strings.Join(roles, ", "))
			}
			if strictString(mm["content"], &msg.Content) != nil {
				return fail("messages[%d].content: want a string", i)
			}
			r.Messages = append(r.Messages, msg)
		}
	default:
		return fail("messages or prompt is required")
	}
	if t := m["tools"]; t != nil {
		var list []json.RawMessage
		if err := json.Unmarshal(t, &list); err != nil || len(list) == 0 {
			return fail("tools: want a non-empty array")
		}
		r.Tools = compact(t)
	}
	if t := m["tool_choice"]; t != nil {
		r.ToolChoice = compact(t)
	}
	for _, f := range []struct {
		name string
		into **float64
		lo   float64
		hi   float64
	}{{"temperature", &r.Temperature, 0, 2}, {"top_p", &r.TopP, 0, 1}} {
		if raw := m[f.name]; raw != nil {
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil || v < f.lo || v > f.hi {
				return fail("%s: want a number in [%v, %v]", f.name, f.lo, f.hi)
			}
			*f.into = &v
		}
	}
	if raw := m["seed"]; raw != nil {
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil {
			return fail("seed: want a whole number")
		}
		r.Seed = &v
	}
	if raw := m["max_tokens"]; raw != nil {
		if err := json.Unmarshal(raw, &r.MaxTokens); err != nil || r.MaxTokens < 1 {
			return fail("max_tokens: want a positive whole number")
		}
	}
	if m["assert"] == nil {
		return fail("assert is required: what must the answer meet?")
	}
	if c.Assert, err = parseAssert(m["assert"]); err != nil {
		return fail("%v", err)
	}
	return c, nil
}

func parseAssert(raw []byte) (Assert, error) {
	var a Assert
	m, err := members(raw, "assert", "contains", "not_contains", "regex", "equals", "json_schema", "tool_call", "max_latency")
	if err != nil {
		return a, err
	}
	if len(m) == 0 {
		return a, errors.New("assert: at least one assertion is required")
	}
	if a.Contains, err = stringList(m["contains"], "assert.contains"); err != nil {
		return a, err
	}
	if a.NotContains, err = stringList(m["not_contains"], "assert.not_contains"); err != nil {
		return a, err
	}
	if raw := m["regex"]; raw != nil {
		var p string
		if strictString(raw, &p) != nil || p == "" {
			return a, errors.New("assert.regex: want a non-empty string")
		}
		if a.Regex, err = regexp.Compile(p); err != nil {
			return a, fmt.Errorf("assert.regex: %w", err)
		}
	}
	if raw := m["equals"]; raw != nil {
		var s string
		if strictString(raw, &s) != nil {
			return a, errors.New("assert.equals: want a string")
		}
		a.Equals = &s
	}
	if raw := m["json_schema"]; raw != nil {
		if a.JSONSchema, err = ParseSchema(raw); err != nil {
			return a, fmt.Errorf("assert.json_schema: %w", err)
		}
	}
	if raw := m["tool_call"]; raw != nil {
		tm, err := members(raw, "assert.tool_call", "name", "arguments")
		if err != nil {
			return a, err
		}
		tc := &ToolCallAssert{}
		if strictString(tm["name"], &tc.Name) != nil || tc.Name == "" {
			return a, errors.New("assert.tool_call.name: required, a string")
		}
		if args := tm["arguments"]; args != nil {
			if tc.Arguments, err = ParseSchema(args); err != nil {
				return a, fmt.Errorf("assert.tool_call.arguments: %w", err)
			}
		}
		a.ToolCall = tc
	}
	if raw := m["max_latency"]; raw != nil {
		var s string
		if strictString(raw, &s) != nil {
			return a, errors.New(`assert.max_latency: want a duration such as "2s"`)
		}
		if a.MaxLatency, err = time.ParseDuration(s); err != nil || a.MaxLatency <= 0 {
			return a, errors.New(`assert.max_latency: want a positive duration such as "2s"`)
		}
	}
	return a, nil
}

// strictString decodes a JSON string (not null, not a number).
func strictString(raw json.RawMessage, into *string) error {
	if len(raw) == 0 || raw[0] != '"' {
		return errors.New("not a string")
	}
	return json.Unmarshal(raw, into)
}

// stringList reads "..." or ["...", ...] (non-empty strings).
func stringList(raw json.RawMessage, what string) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	var one string
	if strictString(raw, &one) == nil {
		if one == "" {
			return nil, fmt.Errorf("%s: empty string", what)
		}
		return []string{one}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return nil, fmt.Errorf("%s: want a string or a non-empty array of strings", what)
	}
	out := make([]string, len(list))
	for i, e := range list {
		if strictString(e, &out[i]) != nil || out[i] == "" {
			return nil, fmt.Errorf("%s[%d]: want a non-empty string", what, i)
		}
	}
	return out, nil
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
