package anthropic

import "github.com/custody-gateway/custody"

// Applied names the members of r that its translation to chat carries
// as something else, or proves no-ops, for the transaction's record
// (custody.CheckTranslation): "no-op:a,b carried:c", names
// only, "" when there are none. ToChat must have accepted r.
func (r *Request) Applied() string {
	var n custody.Translated
	ctl, _ := r.translateControls()
	if len(r.ContextManagement) > 0 {
		if ctl.clearBefore > 0 && r.clearsThinking(ctl.clearBefore) {
			n.Carry("context_management")
		} else {
			n.NoOp("context_management")
		}
	}
	if len(r.Thread) > 0 {
		n.NoOp("thread")
	}
	if r.hasCacheControl() {
		n.NoOp("cache_control")
	}
	if len(r.Thinking) > 0 {
		n.Carry("thinking")
		if ctl.omitThinking {
			n.Carry("thinking.display")
		}
	}
	if ctl.effort != "" {
		n.Carry("output_config.effort")
	}
	if r.Metadata != nil && r.Metadata.UserID != "" {
		n.Carry("metadata.user_id")
	}
	var blocks, errs bool
	for i, m := range r.Messages {
		for _, b := range m.Content {
			blocks = blocks || b.Type == "thinking" && !ctl.clearThinking(i)
			errs = errs || b.Type == "tool_result" && b.IsError
		}
	}
	if blocks {
		n.Carry("messages.thinking")
	}
	if errs {
		n.Carry("messages.is_error")
	}
	for _, t := range r.Tools {
		if t.DeferLoading {
			n.Carry("tools.defer_loading")
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
