package check

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/custody-gateway/custody/openai"
)

// The contract check: an answer honours what its request asked for. A
// request that declares tools, forces a tool_choice, asks for JSON or a
// schema, bounds the tokens, asks for n choices, stop sequences or
// logprobs, makes promises a serving stack can break while still
// answering 200: a call of a tool nobody declared, arguments a tool's
// parser never produced, free text where JSON mode was on, more tokens
// than max_tokens, a stop sequence kept in the text, finish_reason
// tool_calls without a call (engines whose tool parser failed). Each
// broken clause has its own code (Violation.Code). Whether it rejects is
// policy; Violation.Stack says which side of the default it falls on: a
// clause only a broken stack breaks (an undeclared tool, an ignored
// tool_choice, a strict schema broken, a limit exceeded) or one a model
// breaks on its own (arguments missing a property of a non-strict tool).
//
// The contract is read from the request on the upstream's wire: the chat
// request (ChatContract), where a Messages or Responses client translated
// to chat is held to the chat body custody sent, before its answer is
// translated back; a Messages request passed through (MessagesContract,
// contract_messages.go) or a Responses one (ResponsesContract,
// contract_responses.go), whose answers are read on their own wire into
// the same Answer and held by the same clauses.

// ToolChoice is what tool_choice asked for.
type ToolChoice int

const (
	ChoiceAuto     ToolChoice = iota // absent or "auto": the model decides
	ChoiceNone                       // "none": no call
	ChoiceRequired                   // "required" (Messages' "any"): at least one call
	ChoiceNamed                      // {"type":"function","function":{"name":...}}: that tool
)

// Format is what response_format asked for.
type Format int

const (
	FormatText       Format = iota // absent or "text"
	FormatJSONObject               // "json_object": the content is one JSON object
	FormatJSONSchema               // "json_schema": the content validates against the schema
)

// Tool is one declared function tool.
type Tool struct {
	Name string
	// Parameters is the raw schema (nil: any object).
	Parameters []byte
	// Strict: the provider promised arguments that follow the schema
	// exactly (constrained decoding), so only a broken stack breaks it.
	Strict bool
}

// Contract is what a request asked of its answer. The zero value asks
// only what every chat answer owes: one choice, finish_reason tool_calls
// only with calls, no call without declared tools.
type Contract struct {
	// Tools are the declared function tools; with rawTools (the request's
	// member), read only when the answer calls one, by Tools.
	Tools      []Tool
	rawTools   []byte
	ToolChoice ToolChoice
	Named      string // the tool ChoiceNamed names
	NoParallel bool   // parallel_tool_calls: false

	Format       Format
	FormatSchema []byte // json_schema's schema
	FormatStrict bool   // json_schema's strict

	MaxTokens int // max_completion_tokens, else max_tokens; 0: none
	N         int // choices asked for; 0 means 1
	Stop      []string
	KeepStop  bool // include_stop_str_in_output (vLLM): the stop string may end the text
	Logprobs  bool // logprobs: true (or top_logprobs set)

	// completedAtLimit: the answer is a Response, whose "completed" at
	// max_output_tokens may be a cut one (see Check).
	completedAtLimit bool
}

// tool is the declared tool called name, if any.
func (c *Contract) tool(name string) *Tool {
	for i := range c.Tools {
		if c.Tools[i].Name == name {
			return &c.Tools[i]
		}
	}
	return nil
}

// readTools reads the tools member, once, when a clause needs it.
func (c *Contract) readTools(schemas *Schemas) {
	if c.rawTools != nil {
		c.Tools, c.rawTools = schemas.tools(c.rawTools), nil
	}
}

// parseTools reads a tools member: its function tools (a member that
// does not read as the API defines it declares none).
func parseTools(raw []byte) []Tool {
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
			Strict     bool            `json:"strict"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return nil
	}
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if t.Type == "function" || t.Type == "" {
			out = append(out, Tool{Name: t.Function.Name, Parameters: nullIsNil(t.Function.Parameters), Strict: t.Function.Strict})
		}
	}
	return out
}

// choices is how many choices the answer owes.
func (c *Contract) choices() int { return max(c.N, 1) }

// ChatContract derives the contract from a chat request's members. A
// member that does not read as the API defines it adds no clause: the
// upstream refuses such a request, and custody holds an answer only to
// what it can read for certain.
func ChatContract(a *openai.Asked) Contract {
	var c Contract
	c.rawTools = a.Tools // read when a call needs them (tools)
	if a.ToolChoice != nil {
		var s string
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(a.ToolChoice, &s) == nil:
			switch s {
			case "none":
				c.ToolChoice = ChoiceNone
			case "required", "any":
				c.ToolChoice = ChoiceRequired
			}
		case json.Unmarshal(a.ToolChoice, &named) == nil && named.Function.Name != "":
			c.ToolChoice, c.Named = ChoiceNamed, named.Function.Name
		}
	}
	c.NoParallel = string(a.ParallelToolCalls) == "false"
	if a.ResponseFormat != nil {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		}
		if json.Unmarshal(a.ResponseFormat, &rf) == nil {
			switch rf.Type {
			case "json_object":
				c.Format = FormatJSONObject
			case "json_schema":
				c.Format, c.FormatSchema, c.FormatStrict = FormatJSONSchema, nullIsNil(rf.JSONSchema.Schema), rf.JSONSchema.Strict
			}
		}
	}
	c.MaxTokens = positive(a.MaxTokens)
	if n := positive(a.MaxCompletionTokens); n > 0 {
		c.MaxTokens = n
	}
	c.N = positive(a.N)
	if a.Stop != nil {
		var one string
		var list []string
		switch {
		case json.Unmarshal(a.Stop, &one) == nil && one != "":
			c.Stop = []string{one}
		case json.Unmarshal(a.Stop, &list) == nil:
			for _, s := range list {
				if s != "" {
					c.Stop = append(c.Stop, s)
				}
			}
		}
	}
	c.KeepStop = string(a.IncludeStopStrInOutput) == "true"
	c.Logprobs = string(a.Logprobs) == "true"
	return c
}

func nullIsNil(b json.RawMessage) []byte {
	if len(b) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	return b
}

// positive is a JSON whole number > 0, else 0: b's digits, as
// encoding/json decodes them into an int, where b is nothing but digits
// (a sign, a fraction or an exponent, or anything but a number: 0, as a
// negative number or a failed decode was), and within an int.
func positive(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > (math.MaxInt-int(c-'0'))/10 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
