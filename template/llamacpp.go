package template

import (
	"strings"

	"github.com/ardanlabs/jinja"
)

// prefillMarker stands in for a final assistant message's content while
// the template renders it: the prompt is cut where it lands and the
// content itself appended, so the template's trimming and reasoning
// splits never touch text the model is to continue.
const prefillMarker = "\x00custody-prefill\x00"

// renderLlamaCpp renders as llama.cpp's server does (common/chat):
// messages rebuilt from what it parses, tools re-serialised, a final
// assistant message continued rather than closed. forms is how its
// template engine prints floats where that is not as custody's prints
// them (nil: alike).
func (t *Template) renderLlamaCpp(c *chat, forms floatForms) (string, error) {
	msgs := make([]jinja.Value, len(c.messages))
	for i, m := range c.messages {
		msgs[i] = t.llamaMessage(m, c.wrap)
	}
	tools := llamaTools(c.tools)
	if forms != nil {
		for i := range msgs {
			msgs[i] = markFloats(msgs[i], forms)
		}
		tools = markFloats(tools, forms)
	}
	if c.seps {
		msgs, tools = markToolSeparators(msgs, tools)
	}
	out, err := t.renderLlamaMessages(c, msgs, tools)
	return unmarkSeparators(unmarkFloats(out)), err
}

// renderLlamaMessages renders llama.cpp's messages and tools.
func (t *Template) renderLlamaMessages(c *chat, msgs []jinja.Value, tools jinja.Value) (string, error) {
	vars := func(ms []jinja.Value, gen bool) map[string]jinja.Value {
		v := t.vars(c, ms, tools, gen)
		if _, set := v["enable_thinking"]; !set && c.effort == "none" {
			v["enable_thinking"] = jinja.NewBool(false)
		}
		return v
	}
	last := msgs[len(msgs)-1]
	if str(get(last, "role")) != "assistant" {
		return t.exec(vars(msgs, true))
	}
	content := str(get(last, "content"))
	if content == "" {
		// Nothing to continue: the prompt ends after the turn before.
		return t.exec(vars(msgs[:len(msgs)-1], false))
	}
	marked := clone(last)
	marked.AsDict().Set("content", jinja.NewString(prefillMarker))
	msgs[len(msgs)-1] = marked
	out, err := t.exec(vars(msgs, false))
	if err != nil {
		return "", err
	}
	i := strings.LastIndex(out, prefillMarker)
	if i < 0 {
		// The template dropped the message: continue after a fresh
		// generation prompt.
		out, err := t.exec(vars(msgs[:len(msgs)-1], true))
		return out + content, err
	}
	return out[:i] + content, nil
}

// llamaMessage is a message as llama.cpp hands it to the template:
// developer is system, content a string (null is "", text parts joined),
// tool-call arguments parsed when the template prints objects.
func (t *Template) llamaMessage(m jinja.Value, wrap bool) jinja.Value {
	out := clone(m)
	d := out.AsDict()
	if str(get(m, "role")) == "developer" {
		d.Set("role", jinja.NewString("system"))
	}
	d.Set("content", joinText(get(m, "content")))
	mapToolCalls(d, func(tc jinja.Value) jinja.Value {
		fn := get(tc, "function")
		args := get(fn, "arguments")
		if t.objectArgs {
			args = parsedArguments(args, false, wrap)
		}
		call := dict("type", "function", "function", dict("name", get(fn, "name"), "arguments", args))
		if id := get(tc, "id"); id.IsString() {
			call.AsDict().Set("id", id)
		}
		return call
	})
	if r := get(m, "reasoning_content"); !r.IsString() || r.AsString() == "" {
		if d.Has("reasoning_content") {
			out = without(out, "reasoning_content")
		}
	}
	return out
}

// llamaTools re-serialises tool definitions as llama.cpp does: only
// {type, function: {name, description, parameters}}, a missing
// description "".
func llamaTools(tools jinja.Value) jinja.Value {
	if !tools.IsList() {
		return tools
	}
	var out []jinja.Value
	for _, tool := range tools.AsList().Items {
		fn := get(tool, "function")
		desc := get(fn, "description")
		if !desc.IsString() {
			desc = jinja.NewString("")
		}
		params := get(fn, "parameters")
		if params.IsUndefined() {
			params = dict()
		}
		out = append(out, dict("type", "function", "function",
			dict("name", get(fn, "name"), "description", desc, "parameters", params)))
	}
	return jinja.NewList(out)
}
