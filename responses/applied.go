package responses

import "strings"

// Applied names the members of r that its translation to chat carries
// as something else, or proves no-ops, for the transaction's record
// (custody.CheckTranslation): "no-op:a,b carried:c", names only, ""
// when there are none. ToChat must have accepted r.
func (r *Request) Applied() string {
	var n names
	if r.Include != nil {
		n.noOp("include")
	}
	if r.Truncation == "auto" {
		n.noOp("truncation")
	}
	if r.MaxToolCalls != nil {
		n.noOp("max_tool_calls")
	}
	if len(r.Metadata) > 0 && string(r.Metadata) != "null" {
		n.noOp("metadata") // echoed in the Response, not sent
	}
	if _, verbosity, err := responseFormat(r.Text); len(r.Text) > 0 && err == nil && verbosity != "" {
		n.carry("text.verbosity")
	}
	if effort, err := reasoningEffort(r.Reasoning); err == nil && effort != "" {
		n.carry("reasoning.effort")
	}
	for _, it := range r.Input {
		if it.Type == "reasoning" {
			n.carry("input.reasoning")
			break
		}
	}
	return n.String()
}

// names lists member names by what a translation did with them.
type names struct {
	noop, carried, ignored []string
}

// noOp records a member proved a no-op.
func (n *names) noOp(name string) { n.noop = append(n.noop, name) }

// carry records a member carried as something else.
func (n *names) carry(name string) { n.carried = append(n.carried, name) }

// ignore records a member that changes nothing the model computes,
// which the translation does not honour.
func (n *names) ignore(name string) { n.ignored = append(n.ignored, name) }

// String is "no-op:a,b carried:c ignored:d", the empty lists left out.
func (n *names) String() string {
	var parts []string
	for _, l := range []struct {
		label string
		names []string
	}{{"no-op", n.noop}, {"carried", n.carried}, {"ignored", n.ignored}} {
		if len(l.names) > 0 {
			parts = append(parts, l.label+":"+strings.Join(l.names, ","))
		}
	}
	return strings.Join(parts, " ")
}
