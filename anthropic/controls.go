package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/custody-gateway/custody"
)

// The request controls agents send besides the conversation (Claude Code
// sends all of them on every turn), as the translation to chat decides
// each: carried as the engine's own control, a no-op custody can prove,
// or refused naming the member. docs/dialects.md holds the table.

// controls is what the controls become on the chat wire.
type controls struct {
	// enableThinking is chat_template_kwargs.enable_thinking (nil: not
	// set), the switch chat templates of reasoning models read.
	enableThinking *bool
	effort         string // reasoning_effort
}

// translateControls reads thinking, output_config, context_management
// and thread.
func (r *Request) translateControls() (controls, error) {
	var c controls
	if len(r.Thinking) > 0 {
		var t struct {
			Type         string          `json:"type"`
			BudgetTokens json.RawMessage `json:"budget_tokens"`
			Display      string          `json:"display"`
		}
		if json.Unmarshal(r.Thinking, &t) != nil {
			return c, bad("thinking", "thinking must be an object")
		}
		on := true
		switch t.Type {
		case "disabled":
			on = false
		case "enabled", "adaptive":
			if len(t.BudgetTokens) > 0 && string(t.BudgetTokens) != "null" {
				return c, bad("thinking.budget_tokens", "thinking.budget_tokens: a chat completions upstream cannot bound thinking by a token budget; use thinking: {type: adaptive} with output_config.effort, or route to a kind: anthropic provider")
			}
		default:
			return c, bad("thinking.type", "thinking.type must be enabled, adaptive or disabled")
		}
		c.enableThinking = &on
	}
	if len(r.OutputConfig) > 0 {
		var oc map[string]json.RawMessage
		if json.Unmarshal(r.OutputConfig, &oc) != nil {
			return c, bad("output_config", "output_config must be an object")
		}
		for k, v := range oc {
			if k != "effort" {
				return c, untranslatable("output_config." + k)
			}
			if string(v) == "null" {
				continue
			}
			if json.Unmarshal(v, &c.effort) != nil {
				return c, bad("output_config.effort", "output_config.effort must be a string")
			}
			switch c.effort {
			case "low", "medium", "high":
			default:
				return c, bad("output_config.effort", "output_config.effort must be low, medium or high on a chat completions upstream (its reasoning_effort)")
			}
		}
	}
	if err := r.contextManagement(); err != nil {
		return c, err
	}
	if len(r.Thread) > 0 {
		var th struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(r.Thread, &th)
		switch th.Type {
		case "create":
			// The request holds the whole conversation; custody serves it
			// and stores nothing, so a continue is answered
			// thread_not_found, on which the SDKs send the whole
			// conversation again.
		case "continue":
			return c, ThreadNotFound()
		default:
			return c, bad("thread.type", "thread.type must be create or continue")
		}
	}
	return c, nil
}

// contextManagement proves each edit a no-op on the translated prompt, or
// refuses it: clear_thinking clears thinking blocks, which the
// translation never sends (the engine's template drops earlier turns'
// reasoning itself); clear_tool_uses clears tool results, a no-op only
// when the conversation has none.
func (r *Request) contextManagement() error {
	if len(r.ContextManagement) == 0 {
		return nil
	}
	var cm struct {
		Edits []struct {
			Type string `json:"type"`
		} `json:"edits"`
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(r.ContextManagement, &all) != nil || json.Unmarshal(r.ContextManagement, &cm) != nil {
		return bad("context_management", "context_management must be an object with edits")
	}
	for k := range all {
		if k != "edits" {
			return untranslatable("context_management." + k)
		}
	}
	for i, e := range cm.Edits {
		p := fmt.Sprintf("context_management.edits[%d]", i)
		switch {
		case strings.HasPrefix(e.Type, "clear_thinking_"):
		case strings.HasPrefix(e.Type, "clear_tool_uses_"):
			if r.hasBlock("tool_result") {
				return bad(p, "%s: custody does not clear tool results from a conversation it translates to chat completions: clear them in the client, or route to a kind: anthropic provider", p)
			}
		default:
			return untranslatable(p + ".type")
		}
	}
	return nil
}

func (r *Request) hasBlock(typ string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == typ {
				return true
			}
		}
	}
	return false
}

// ThreadNotFound is the answer to a thread continue: custody keeps no
// conversation, so it has no thread to continue. The Anthropic SDKs
// read error.details.error_code thread_not_found and send the whole
// conversation again under a new thread (ErrorBody).
func ThreadNotFound() *custody.Error {
	return &custody.Error{Code: custody.CodeNotFound, HTTPStatus: http.StatusNotFound, Param: "thread",
		Message: "custody stores no conversation, so it has no thread to continue; send the whole conversation with thread: {type: create} or without thread"}
}
