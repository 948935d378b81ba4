package template

import (
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
	out, err := t.exec(t.vars(c, msgs, pyFloats(vllmTools(c.tools)), true))
	return unmarkFloats(out), err
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
			fn.AsDict().Set("arguments", parsedArguments(args, true))
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
