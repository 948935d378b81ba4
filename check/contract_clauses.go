package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/jsonschema"
)

// Violation is one broken clause of a contract.
type Violation struct {
	Code custody.Code
	// Clause is the request member whose promise was broken (tools,
	// arguments, tool_choice, parallel_tool_calls, finish_reason,
	// response_format, max_tokens, n, stop, logprobs): the per-route
	// pass rates count by it.
	Clause string
	// Stack: only a broken serving stack breaks this clause (by default
	// it rejects); else a model can break it on its own (by default
	// flagged).
	Stack bool
	// NotObject: the arguments of a call are not one JSON object, which
	// no translation can turn into a Messages tool_use input.
	NotObject bool
	// Detail says where and what, for the client and the ledger: clause,
	// choice and call positions, counts, never text or a name from the
	// answer.
	Detail string
}

// Clauses are the contract's clauses, in the order Check reports them.
var Clauses = []string{"n", "tools", "tool_choice", "parallel_tool_calls", "arguments", "finish_reason",
	"response_format", "stop", "max_tokens", "logprobs"}

// Check holds a to c and returns every broken clause (none: nil).
// Schemas compiles the schemas (nil: compiled each time).
func (c *Contract) Check(a Answer, schemas *Schemas) []Violation {
	var vs []Violation
	add := func(code custody.Code, clause string, stack bool, format string, args ...any) *Violation {
		vs = append(vs, Violation{Code: code, Clause: clause, Stack: stack, Detail: clause + ": " + fmt.Sprintf(format, args...)})
		return &vs[len(vs)-1] // valid until the next add
	}
	n := c.choices()
	if len(a.Choices) != n {
		add(custody.CodeContractChoicesInvalid, "n", true, "%d choices for n=%d", len(a.Choices), n)
	} else {
		for i := range a.Choices {
			if idx := a.Choices[i].Index; idx < 0 || idx >= n || seenBefore(a.Choices[:i], idx) {
				add(custody.CodeContractChoicesInvalid, "n", true, "choice index %d outside 0..%d or repeated", idx, n-1)
				break
			}
		}
	}
	for i := range a.Choices {
		ch := a.Choices[i]
		if c.completedAtLimit && ch.Finish == "stop" && c.MaxTokens > 0 && a.CompletionTokens >= c.MaxTokens {
			// A Response completed without a call at max_output_tokens
			// may be one the limit cut: llama.cpp (80fb11a) says
			// "completed" where the API says "incomplete". Read as a
			// length, it is not held to a call or a format it had no
			// room to finish (TestEnginePassThrough).
			ch.Finish = "length"
		}
		c.checkChoice(&ch, schemas, add)
	}
	if c.MaxTokens > 0 && a.CompletionTokens > c.MaxTokens*n {
		add(custody.CodeContractLimitExceeded, "max_tokens", true, "%d completion tokens for max_tokens %d", a.CompletionTokens, c.MaxTokens)
	}
	if c.MaxTokens > 0 && n == 1 && len(a.Choices) == 1 && a.Choices[0].Finish == "length" &&
		a.CompletionTokens >= 0 && a.CompletionTokens < c.MaxTokens {
		// The context window can end an answer before max_tokens does:
		// a model-side clause, flagged by default, not a stack's fault
		// custody can prove.
		add(custody.CodeContractFinishInvalid, "finish_reason", false, "finish length at %d completion tokens, under max_tokens %d", a.CompletionTokens, c.MaxTokens)
	}
	return vs
}

func seenBefore(cs []AnswerChoice, idx int) bool {
	for i := range cs {
		if cs[i].Index == idx {
			return true
		}
	}
	return false
}

type addFunc func(code custody.Code, clause string, stack bool, format string, args ...any) *Violation

func (c *Contract) checkChoice(ch *AnswerChoice, schemas *Schemas, add addFunc) {
	at := fmt.Sprintf("choice %d", ch.Index)
	// A Messages pause_turn is an answer to be continued, as unfinished
	// as one cut at a length.
	truncated := ch.Finish == "length" || ch.Finish == finishPaused
	if len(ch.Calls) > 0 {
		c.readTools(schemas)
		if c.ToolChoice == ChoiceNone {
			add(custody.CodeContractToolChoiceIgnored, "tool_choice", true, "%s: %d calls for tool_choice none", at, len(ch.Calls))
		}
		if c.NoParallel && len(ch.Calls) > 1 {
			add(custody.CodeContractToolChoiceIgnored, "parallel_tool_calls", true, "%s: %d calls for parallel_tool_calls false", at, len(ch.Calls))
		}
		for j, call := range ch.Calls {
			where := fmt.Sprintf("%s call %d", at, j)
			t := c.tool(call.Name)
			if t == nil {
				add(custody.CodeContractToolUnknown, "tools", true, "%s names a tool the request did not declare (%d declared)", where, len(c.Tools))
				continue
			}
			if c.ToolChoice == ChoiceNamed && call.Name != c.Named {
				add(custody.CodeContractToolChoiceIgnored, "tool_choice", true, "%s is not the tool tool_choice named", where)
			}
			if !truncated {
				c.checkArguments(t, call.Arguments, where, schemas, add)
			}
		}
		forced := c.ToolChoice == ChoiceNamed || c.ToolChoice == ChoiceRequired
		if f := ch.Finish; f != "tool_calls" && !truncated && f != "content_filter" && !(f == "stop" && forced) {
			// A forced call finishes "stop" on OpenAI; otherwise calls
			// end with tool_calls. Clients still see the calls: flagged.
			add(custody.CodeContractFinishInvalid, "finish_reason", false, "%s: %d calls with finish %q", at, len(ch.Calls), truncate(f))
		}
		return
	}
	if ch.Finish == "tool_calls" {
		// An engine whose tool parser failed: the call is lost, and the
		// client is told to run it (the Messages and Responses
		// translations would make a tool_use with no block).
		add(custody.CodeContractFinishInvalid, "finish_reason", true, "%s: finish tool_calls without a call", at)
	}
	if (c.ToolChoice == ChoiceRequired || c.ToolChoice == ChoiceNamed) && !truncated && ch.Finish != "content_filter" {
		add(custody.CodeContractToolChoiceIgnored, "tool_choice", true, "%s: no call where tool_choice required one", at)
	}
	if c.Format != FormatText && ch.Finish == "stop" {
		c.checkFormat(ch.Text, at, schemas, add)
	}
	if len(c.Stop) > 0 && ch.Finish == "stop" {
		text := ch.Text
		if c.KeepStop {
			for _, s := range c.Stop {
				if t, ok := strings.CutSuffix(text, s); ok {
					text = t
					break
				}
			}
		}
		for i, s := range c.Stop {
			if strings.Contains(text, s) {
				add(custody.CodeContractStopIgnored, "stop", true, "%s: stop sequence %d inside a text that finished stop", at, i)
				break
			}
		}
	}
	if ch.AtStop && !slices.Contains(c.Stop, ch.StopSequence) {
		// A stop at a sequence nobody asked for: a stack's own stop
		// strings (a generation config's) may say so too, so flagged.
		add(custody.CodeContractFinishInvalid, "finish_reason", false, "%s: finish at a stop sequence the request did not ask for (%d asked)", at, len(c.Stop))
	}
	if c.Logprobs && !ch.Logprobs && ch.Text != "" {
		add(custody.CodeContractLogprobsMissing, "logprobs", true, "%s: no logprobs where logprobs were asked for", at)
	}
}

// checkArguments holds one call's arguments to its tool: one JSON object
// valid against the tool's parameters. A strict tool's arguments are the
// provider's promise (schema_invalid, a broken stack's); a non-strict
// one's are the model's (arguments_invalid).
func (c *Contract) checkArguments(t *Tool, args, where string, schemas *Schemas, add addFunc) {
	code := custody.CodeContractArgumentsInvalid
	if t.Strict {
		code = custody.CodeContractSchemaInvalid
	}
	if strings.TrimSpace(args) == "" {
		args = "{}" // engines send "" for a call without arguments
	}
	v, err := jsonschema.Decode([]byte(args), false)
	obj, isObject := v.(map[string]any)
	if err != nil || !isObject {
		add(code, "arguments", t.Strict, "%s: arguments are not one JSON object", where).NotObject = true
		return
	}
	if t.Parameters == nil {
		return
	}
	s, err := schemas.Compile(t.Parameters)
	if err != nil {
		return // a schema custody cannot read holds the answer to nothing
	}
	if err := s.Validate(obj); err != nil {
		add(code, "arguments", t.Strict, "%s: %v", where, err)
	}
}

// checkFormat holds a stop-finished text to response_format: one JSON
// object, valid against the json_schema. Text where JSON mode was on is a
// stack that ignored response_format; a non-strict schema broken is the
// model's.
func (c *Contract) checkFormat(text, at string, schemas *Schemas, add addFunc) {
	v, err := jsonschema.Decode([]byte(text), false)
	obj, isObject := v.(map[string]any)
	if err != nil || !isObject {
		add(custody.CodeContractFormatInvalid, "response_format", true, "%s: the content is not one JSON object", at)
		return
	}
	if c.Format != FormatJSONSchema || c.FormatSchema == nil {
		return
	}
	s, err := schemas.Compile(c.FormatSchema)
	if err != nil {
		return
	}
	if err := s.Validate(obj); err != nil {
		if c.FormatStrict {
			add(custody.CodeContractSchemaInvalid, "response_format", true, "%s: %v", at, err)
		} else {
			add(custody.CodeContractFormatInvalid, "response_format", false, "%s: %v", at, err)
		}
	}
}

// truncate bounds an upstream's word quoted in a detail.
func truncate(s string) string { return jsonschema.Truncate(s, 24) }
