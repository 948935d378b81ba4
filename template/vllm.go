package template

import (
	"strings"
	"unicode"

	"github.com/ardanlabs/jinja"
)

// renderVLLM renders as vLLM's chat endpoint does (transformers'
// apply_chat_template after vLLM's own message parsing): the generation
// prompt always added, chat_template_kwargs passed, tools dumped from
// its pydantic models, tool-call arguments parsed into objects.
func (t *Template) renderVLLM(c *chat) (string, error) {
	msgs := make([]jinja.Value, len(c.messages))
	for i, m := range c.messages {
		msgs[i] = t.vllmMessage(m)
	}
	// Python prints floats its own way, in tool schemas and in parsed
	// arguments alike.
	for i := range msgs {
		msgs[i] = pyFloats(msgs[i])
	}
	tools := pyFloats(vllmTools(c.tools))
	if c.seps {
		msgs, tools = markToolSeparators(msgs, tools)
	}
	if c.continueFinal && c.genPrompt {
		return "", &RaiseError{Message: "continue_final_message and add_generation_prompt cannot both be true"}
	}
	out, err := t.exec(t.vars(c, msgs, tools, c.genPrompt && !c.continueFinal))
	if err != nil {
		return "", err
	}
	out = unmarkSeparators(unmarkFloats(out))
	if c.continueFinal {
		return continueFinal(out, c.messages[len(c.messages)-1])
	}
	return out, nil
}

// continueFinal cuts a rendering after the final message's text, as
// transformers' continue_final_message does: at its last occurrence, with
// its trailing space when the template kept it.
func continueFinal(rendered string, last jinja.Value) (string, error) {
	final := get(last, "content")
	if final.IsList() {
		its := final.AsList().Items
		final = jinja.Undefined()
		for i := len(its) - 1; i >= 0; i-- {
			if t := get(its[i], "text"); t.IsString() {
				final = t
				break
			}
		}
	}
	if !final.IsString() {
		return "", &RaiseError{Message: "continue_final_message needs a final message with text content"}
	}
	msg := final.AsString()
	trimmed := strings.TrimSpace(msg)
	at := strings.LastIndex(rendered, trimmed)
	if at < 0 {
		return "", &RaiseError{Message: "continue_final_message is set but the final message does not appear in the chat after applying the chat template"}
	}
	if strings.HasPrefix(rendered[at:], strings.TrimLeftFunc(msg, unicode.IsSpace)) {
		return rendered[:at+len(strings.TrimLeftFunc(msg, unicode.IsSpace))], nil
	}
	return rendered[:at+len(trimmed)], nil
}

// vllmMessage is a message as vLLM's parser leaves it: content a string
// (text parts joined with "\n"), or a list of parts for a template that
// iterates over parts; tool-call arguments parsed; reasoning_content not
// passed on.
func (t *Template) vllmMessage(m jinja.Value) jinja.Value {
	out := clone(m)
	if out.AsDict().Has("reasoning_content") {
		out = without(out, "reasoning_content")
	}
	d := out.AsDict()
	if t.partsContent {
		d.Set("content", textParts(get(m, "content")))
	} else {
		d.Set("content", joinText(get(m, "content")))
	}
	mapToolCalls(d, func(tc jinja.Value) jinja.Value {
		call, fn := clone(tc), clone(get(tc, "function"))
		if args, ok := fn.AsDict().Get("arguments"); ok {
			fn.AsDict().Set("arguments", parsedArguments(args, true, false))
		}
		call.AsDict().Set("function", fn)
		return call
	})
	return out
}

// vllmTools dumps tools as vLLM's request model does: type, then
// function with name, description (null when absent) and parameters
// (null when absent), then any other keys the client sent.
func vllmTools(tools jinja.Value) jinja.Value {
	if !tools.IsList() {
		return tools
	}
	var out []jinja.Value
	for _, tool := range tools.AsList().Items {
		fn := get(tool, "function")
		f := dict("name", get(fn, "name"), "description", orNone(get(fn, "description")), "parameters", orNone(get(fn, "parameters")))
		if fn.IsDict() {
			for _, k := range fn.AsDict().Keys {
				if !f.AsDict().Has(k) {
					f.AsDict().Set(k, fn.AsDict().Data[k])
				}
			}
		}
		t := dict("type", "function", "function", f)
		out = append(out, t)
	}
	return jinja.NewList(out)
}

func orNone(v jinja.Value) jinja.Value {
	if v.IsUndefined() {
		return jinja.None()
	}
	return v
}

// textParts is content in OpenAI's parts form: a string becomes one text
// part, null none.
func textParts(content jinja.Value) jinja.Value {
	switch {
	case content.IsString():
		return jinja.NewList([]jinja.Value{dict("type", "text", "text", content)})
	case content.IsList():
		return content
	}
	return jinja.NewList(nil)
}
