package responses

import "github.com/custody-gateway/custody"

// Applied names the members of r that its translation to chat carries
// as something else, or proves no-ops, for the transaction's record
// (custody.CheckTranslation): "no-op:a,b carried:c", names only, ""
// when there are none. ToChat must have accepted r.
func (r *Request) Applied() string {
	var n custody.Translated
	if r.Include != nil {
		n.NoOp("include")
	}
	if r.Truncation == "auto" {
		n.NoOp("truncation")
	}
	if r.MaxToolCalls != nil {
		n.NoOp("max_tool_calls")
	}
	if len(r.Metadata) > 0 && string(r.Metadata) != "null" {
		n.NoOp("metadata") // echoed in the Response, not sent
	}
	if _, verbosity, err := responseFormat(r.Text); len(r.Text) > 0 && err == nil && verbosity != "" {
		n.Carry("text.verbosity")
	}
	if effort, err := reasoningEffort(r.Reasoning); err == nil && effort != "" {
		n.Carry("reasoning.effort")
	}
	for _, it := range r.Input {
		if it.Type == "reasoning" {
			n.Carry("input.reasoning")
			break
		}
	}
	return n.String()
}
