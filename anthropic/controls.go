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
	// clearBefore: the thinking of assistant turns before this message
	// index is cleared (context_management clear_thinking); 0: none.
	clearBefore int
	// omitThinking: thinking.display is omitted, so the answer's
	// thinking blocks come back without their text (OmitsThinking).
	omitThinking bool
}

// clearThinking reports whether the thinking of message i is cleared.
func (c controls) clearThinking(i int) bool { return i < c.clearBefore }

// translateControls reads thinking, output_config, context_management
// and thread.
func (r *Request) translateControls() (controls, error) {
	var c controls
	var err error
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
		c.omitThinking = t.Display == "omitted"
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
	if c.clearBefore, err = r.contextManagement(); err != nil {
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

// contextManagement applies each edit to the translated prompt, proves
// it a no-op, or refuses it: clear_thinking clears the thinking of all
// but the last keep turns that have some (keep: all clears none), which
// custody applies, returning the index before which thinking is cleared;
// clear_tool_uses clears tool results, a no-op only when the
// conversation has none.
func (r *Request) contextManagement() (int, error) {
	if len(r.ContextManagement) == 0 {
		return 0, nil
	}
	var cm struct {
		Edits []struct {
			Type string          `json:"type"`
			Keep json.RawMessage `json:"keep"`
		} `json:"edits"`
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(r.ContextManagement, &all) != nil || json.Unmarshal(r.ContextManagement, &cm) != nil {
		return 0, bad("context_management", "context_management must be an object with edits")
	}
	for k := range all {
		if k != "edits" {
			return 0, untranslatable("context_management." + k)
		}
	}
	clearBefore := 0
	for i, e := range cm.Edits {
		p := fmt.Sprintf("context_management.edits[%d]", i)
		switch {
		case strings.HasPrefix(e.Type, "clear_thinking_"):
			keep, err := thinkingTurns(e.Keep, p+".keep")
			if err != nil {
				return 0, err
			}
			if keep >= 0 {
				clearBefore = max(clearBefore, r.thinkingCut(keep))
			}
		case strings.HasPrefix(e.Type, "clear_tool_uses_"):
			if r.hasBlock("tool_result") {
				return 0, bad(p, "%s: custody does not clear tool results from a conversation it translates to chat completions: clear them in the client, or route to a kind: anthropic provider", p)
			}
		default:
			return 0, untranslatable(p + ".type")
		}
	}
	return clearBefore, nil
}

// thinkingTurns is a clear_thinking edit's keep: the number of turns
// whose thinking is kept (1 when absent), -1 for all.
func thinkingTurns(raw json.RawMessage, param string) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 1, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "all" {
			return -1, nil
		}
		return 0, bad(param, "%s must be all or {type: thinking_turns, value}", param)
	}
	var k struct {
		Type  string `json:"type"`
		Value *int   `json:"value"`
	}
	if json.Unmarshal(raw, &k) != nil || k.Type != "thinking_turns" || k.Value == nil || *k.Value < 0 {
		return 0, bad(param, "%s must be all or {type: thinking_turns, value}", param)
	}
	return *k.Value, nil
}

// thinkingCut is the message index before which thinking is cleared
// when the last keep assistant turns with thinking keep theirs.
func (r *Request) thinkingCut(keep int) int {
	kept := 0
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "assistant" || !hasThinking(m) {
			continue
		}
		if kept == keep {
			return i + 1
		}
		kept++
	}
	return 0
}

func hasThinking(m Message) bool {
	for _, b := range m.Content {
		if b.Type == "thinking" {
			return true
		}
	}
	return false
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
