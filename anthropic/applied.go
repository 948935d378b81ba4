package anthropic

import (
	"encoding/json"
	"strings"
)

// Applied names the members of r that its translation to chat carries
// as something else, or proves no-ops, for the transaction's record
// (custody.CheckTranslation): "no-op:a,b carried:c ignored:d", names
// only, "" when there are none. ToChat must have accepted r.
func (r *Request) Applied() string {
	var n names
	ctl, _ := r.translateControls()
	if len(r.ContextManagement) > 0 {
		if ctl.clearBefore > 0 && r.clearsThinking(ctl.clearBefore) {
			n.carry("context_management")
		} else {
			n.noOp("context_management")
		}
	}
	if len(r.Thread) > 0 {
		n.noOp("thread")
	}
	if r.hasCacheControl() {
		n.noOp("cache_control")
	}
	if len(r.Thinking) > 0 {
		n.carry("thinking")
		var t struct {
			Display string `json:"display"`
		}
		if json.Unmarshal(r.Thinking, &t) == nil && t.Display == "omitted" {
			n.ignore("thinking.display")
		}
	}
	if ctl.effort != "" {
		n.carry("output_config.effort")
	}
	if r.Metadata != nil && r.Metadata.UserID != "" {
		n.carry("metadata.user_id")
	}
	var blocks, errs bool
	for i, m := range r.Messages {
		for _, b := range m.Content {
			blocks = blocks || b.Type == "thinking" && !ctl.clearThinking(i)
			errs = errs || b.Type == "tool_result" && b.IsError
		}
	}
	if blocks {
		n.carry("messages.thinking")
	}
	if errs {
		n.carry("messages.is_error")
	}
	for _, t := range r.Tools {
		if t.DeferLoading {
			n.carry("tools.defer_loading")
			break
		}
	}
	return n.String()
}

// clearsThinking reports whether a thinking block sits before message
// index before.
func (r *Request) clearsThinking(before int) bool {
	for i := 0; i < before && i < len(r.Messages); i++ {
		if r.Messages[i].Role == "assistant" && hasThinking(r.Messages[i]) {
			return true
		}
	}
	return false
}

func (r *Request) hasCacheControl() bool {
	for _, b := range r.System {
		if len(b.CacheControl) > 0 {
			return true
		}
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if len(b.CacheControl) > 0 {
				return true
			}
			for _, c := range b.Content {
				if len(c.CacheControl) > 0 {
					return true
				}
			}
		}
	}
	return false
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
