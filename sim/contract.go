package sim

import (
	"encoding/json"
	"slices"
	"strings"
)

// honourContract makes the toy model's chat answer honour what the
// request asked beyond the words, as an engine does: the stop sequences
// (the text ends before the first one, finish stop) and response_format
// (the content is one JSON object: {"answer": text} for json_object, an
// object with every property of the json_schema otherwise); then applies
// the contract faults in force (faults.go), which break exactly one of
// these promises each. maxTokens is the request's limit (nil: none).
func honourContract(fs faultSet, req *chatRequest, res *result, maxTokens *int) {
	stops := stopsOf(req.Stop)
	if len(stops) > 0 && res.call == nil && !fs[FaultStopKept] {
		cutAtStop(res, stops)
	}
	if rf := req.ResponseFormat; rf != nil && res.call == nil && !fs[FaultFormatIgnored] && len(res.tokens) > 0 {
		res.tokens = slices.Clone(res.tokens)
		if rf.Type == "json_object" || rf.Type == "json_schema" {
			res.finish = "stop" // the object is closed: one token holds it
		}
		switch rf.Type {
		case "json_object":
			text, _ := json.Marshal(content(res.tokens))
			res.tokens = res.tokens[:1]
			res.tokens[0].text = `{"answer":` + string(text) + `}`
		case "json_schema":
			obj := argumentsFor(rf.JSONSchema.Schema, res)
			res.tokens = res.tokens[:1]
			res.tokens[0].text = string(obj)
		}
	}
	if fs[FaultLogprobsDropped] {
		req.Logprobs = false
	}
	res.misindexed = fs[FaultChoiceMisindexed]
	switch {
	case fs[FaultToolUndeclared]:
		res.call = &toolCall{ID: "call_" + randomID(8), Name: "undeclared_tool", Arguments: `{}`}
		res.finish = "tool_calls"
	case fs[FaultToolArgumentsInvalid] && len(req.Tools) > 0:
		res.call = &toolCall{ID: "call_" + randomID(8), Name: req.Tools[0].Function.Name, Arguments: `{"broken": `}
		res.finish = "tool_calls"
	case fs[FaultToolChoiceIgnored]:
		var mode string
		_ = json.Unmarshal(req.ToolChoice, &mode)
		if mode == "none" && len(req.Tools) > 0 {
			res.call = &toolCall{ID: "call_" + randomID(8), Name: req.Tools[0].Function.Name, Arguments: `{}`}
			res.finish = "tool_calls"
		} else if res.call != nil {
			res.call, res.finish = nil, "stop"
		}
	case fs[FaultFinishToolCallsEmpty]:
		res.call, res.finish = nil, "tool_calls"
	case fs[FaultStopKept] && len(stops) > 0 && len(res.tokens) > 0:
		res.tokens = slices.Clone(res.tokens)
		// The stop sequence comes out, and the text goes on after it.
		res.tokens[len(res.tokens)/2].text += " " + stops[0] + " "
		res.finish = "stop"
	case fs[FaultMaxTokensExceeded] && maxTokens != nil && len(res.tokens) > 0:
		res.tokens = slices.Clone(res.tokens)
		for len(res.tokens) <= *maxTokens {
			res.tokens = append(res.tokens, res.tokens[len(res.tokens)-1])
		}
		res.finish = "length"
	}
}

// stopsOf is the stop member: a string or a list of them.
func stopsOf(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(raw, &list)
	out := list[:0]
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// cutAtStop ends the answer before the first token whose text completes
// a stop sequence, which is not generated (engines leave it out).
func cutAtStop(res *result, stops []string) {
	var b strings.Builder
	for i, t := range res.tokens {
		b.WriteString(t.text)
		for _, s := range stops {
			if j := strings.Index(b.String(), s); j >= 0 {
				// The token that completes it is cut to what came before.
				full, p0 := b.String(), b.Len()-len(t.text)
				kept := ""
				if j >= p0 {
					kept = full[p0:j]
				}
				res.tokens = slices.Clone(res.tokens[:i+1])
				res.tokens[i].text = kept
				if kept == "" {
					res.tokens = res.tokens[:i]
				}
				res.finish = "stop"
				return
			}
		}
	}
}
