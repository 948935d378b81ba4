package template

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// ErrNotRendered is returned by Render for an engine whose rendering
// custody does not reproduce (openai, auto).
var ErrNotRendered = errors.New("engine does not render a known template")

// Prompt is a chat request as an engine renders it.
type Prompt struct {
	// Text is the rendered prompt, special tokens as text, BOS included
	// when the template writes it.
	Text string
	// Media counts the image and audio parts: their tokens are not in
	// Text and depend on the engine's processor.
	Media int
}

// Render renders a chat request body (the client's JSON) as engine e
// would before counting it. A template's own refusal is a *RaiseError;
// a request that is not a chat request is an error too.
func (t *Template) Render(e Engine, body []byte) (Prompt, error) {
	req, err := ParseRequest(body)
	if err != nil {
		return Prompt{}, err
	}
	return t.RenderRequest(e, req)
}

// Request is a chat request decoded once, to be rendered for several
// engines.
type Request struct {
	c *chat
	// body is kept for EngineLlamaCppStream when big: its integers past
	// int64 are decoded again, wrapped.
	body []byte
	big  bool
	// numbers: a message or tool holds a float or an integer past
	// int64, which llama.cpp's two renderings print differently.
	numbers bool
}

// ParseRequest decodes a chat request body.
func ParseRequest(body []byte) (*Request, error) {
	c, big, err := parseChat(body, false)
	if err != nil {
		return nil, err
	}
	r := &Request{c: c, body: body, big: big}
	r.numbers = big || c.hasNumbers()
	return r, nil
}

func parseChat(body []byte, wrap bool) (*chat, bool, error) {
	req, big, err := decodeInts(body, wrap)
	if err != nil {
		return nil, false, fmt.Errorf("decoding request: %w", err)
	}
	if !req.IsDict() {
		return nil, false, errors.New("request must be a JSON object")
	}
	c, err := newChat(req)
	if err != nil {
		return nil, false, err
	}
	c.seps = hasSeparators(body)
	c.wrap = wrap
	return c, big, nil
}

// Renderings are the renderings a request is counted under for engine
// e: llama.cpp's two where they differ on it (both, for EngineLlamaCpp,
// whose build custody does not know), every engine's for auto (one
// where they all render it alike), else e itself.
func (t *Template) Renderings(e Engine, r *Request) []Engine {
	switch e {
	case EngineLlamaCpp:
		if r.numbers {
			return []Engine{EngineLlamaCppShortest, EngineLlamaCppStream}
		}
		return []Engine{EngineLlamaCppShortest}
	case EngineAuto:
		if t.Uniform(r) {
			return []Engine{EngineLlamaCppShortest}
		}
		out := t.Renderings(EngineLlamaCpp, r)
		return append(out, EngineVLLM)
	}
	return []Engine{e}
}

// RenderRequest renders a decoded request as engine e would.
func (t *Template) RenderRequest(e Engine, r *Request) (Prompt, error) {
	as, ok := e.renderAs()
	if !ok {
		return Prompt{}, fmt.Errorf("%w: %s", ErrNotRendered, e)
	}
	var (
		text string
		err  error
	)
	switch as {
	case EngineLlamaCpp:
		text, err = t.renderLlamaCpp(r.c, nil)
	case EngineLlamaCppStream:
		c := *r.c // its tool calls' arguments parse wrapped too
		c.wrap = true
		if r.big {
			wrapped, _, err := parseChat(r.body, true)
			if err != nil {
				return Prompt{}, err
			}
			c = *wrapped
		}
		text, err = t.renderLlamaCpp(&c, streamForms)
	case EngineVLLM:
		text, err = t.renderVLLM(r.c)
	}
	return Prompt{Text: text, Media: r.c.media}, err
}

// Uniform reports whether every engine Render reproduces hands this
// request to t unchanged, and so renders it alike: string contents, the
// roles every engine passes as they are, no tools, tool calls or
// reasoning, no final assistant message to continue. Most traffic is;
// a caller then renders it once.
func (t *Template) Uniform(r *Request) bool {
	c := r.c
	if len(items(c.tools)) > 0 || c.effort == "none" || t.partsContent || !c.genPrompt || c.continueFinal {
		return false
	}
	for _, m := range c.messages {
		switch str(get(m, "role")) {
		case "system", "user", "assistant", "tool":
		default:
			return false
		}
		d := m.AsDict()
		if !get(m, "content").IsString() || d.Has("tool_calls") || d.Has("reasoning_content") {
			return false
		}
	}
	return str(get(c.messages[len(c.messages)-1], "role")) != "assistant"
}

// chat is the part of a request a template sees, before any engine's
// preprocessing.
type chat struct {
	messages []jinja.Value // dicts
	tools    jinja.Value   // list, or Undefined
	kwargs   *jinja.Dict   // chat_template_kwargs, or nil
	effort   string        // reasoning_effort
	media    int
	// vLLM's own request fields: add_generation_prompt (default true)
	// and continue_final_message.
	genPrompt, continueFinal bool
	// seps: the body may hold U+2028 or U+2029 (markSeparators).
	seps bool
	// wrap: decoded for llama.cpp's Jinja engine, integers past int64
	// wrapped; tool-call arguments are parsed alike.
	wrap bool
}

// hasNumbers reports whether a message or tool holds a float, or a
// tool call's JSON-string arguments do.
func (c *chat) hasNumbers() bool {
	if hasFloat(c.tools) {
		return true
	}
	for _, m := range c.messages {
		if hasFloat(m) {
			return true
		}
		for _, tc := range items(get(m, "tool_calls")) {
			args := get(get(tc, "function"), "arguments")
			if !args.IsString() {
				continue
			}
			v, big, err := decodeInts([]byte(args.AsString()), false)
			if err == nil && (big || hasFloat(v)) {
				return true
			}
		}
	}
	return false
}

func hasFloat(v jinja.Value) bool {
	switch {
	case v.IsFloat():
		return true
	case v.IsList():
		for _, it := range v.AsList().Items {
			if hasFloat(it) {
				return true
			}
		}
	case v.IsDict():
		d := v.AsDict()
		for _, k := range d.Keys {
			if hasFloat(d.Data[k]) {
				return true
			}
		}
	}
	return false
}

// ErrClientTemplate is returned for a request that brings its own
// chat_template (vLLM renders with it where the server allows): custody
// does not run a client's Jinja, so such a prompt is counted without a
// template.
var ErrClientTemplate = errors.New("the request brings its own chat_template")

func newChat(req jinja.Value) (*chat, error) {
	if t := get(req, "chat_template"); !t.IsUndefined() && !t.IsNone() {
		return nil, ErrClientTemplate
	}
	c := &chat{tools: get(req, "tools"), effort: str(get(req, "reasoning_effort")), genPrompt: true}
	if g := get(req, "add_generation_prompt"); g.IsBool() {
		c.genPrompt = g.AsBool()
	}
	if f := get(req, "continue_final_message"); f.IsBool() {
		c.continueFinal = f.AsBool()
	}
	msgs := get(req, "messages")
	if !msgs.IsList() || msgs.AsList().Len() == 0 {
		return nil, errors.New("messages must be a non-empty array")
	}
	for i, m := range msgs.AsList().Items {
		if !m.IsDict() {
			return nil, fmt.Errorf("messages[%d] must be an object", i)
		}
		for _, p := range items(get(m, "content")) {
			switch str(get(p, "type")) {
			case "image_url", "image", "input_image", "input_audio", "audio_url", "video_url":
				c.media++
			}
		}
		c.messages = append(c.messages, m)
	}
	if kw := get(req, "chat_template_kwargs"); kw.IsDict() {
		c.kwargs = kw.AsDict()
	}
	return c, nil
}

// joinText joins a content's text parts with "\n" (what llama.cpp and
// vLLM both do before rendering); a string is itself, null or absent "".
func joinText(content jinja.Value) jinja.Value {
	if content.IsString() {
		return content
	}
	if !content.IsList() {
		return jinja.NewString("")
	}
	var texts []string
	for _, p := range content.AsList().Items {
		if t := get(p, "text"); t.IsString() {
			texts = append(texts, t.AsString())
		}
	}
	return jinja.NewString(strings.Join(texts, "\n"))
}

// vars are the template's variables for one render.
func (t *Template) vars(c *chat, messages []jinja.Value, tools jinja.Value, genPrompt bool) map[string]jinja.Value {
	v := map[string]jinja.Value{
		"messages":              jinja.NewList(messages),
		"add_generation_prompt": jinja.NewBool(genPrompt),
	}
	if tools.IsList() && tools.AsList().Len() > 0 {
		v["tools"] = tools
	}
	if c.kwargs != nil {
		for _, k := range c.kwargs.Keys {
			v[k] = c.kwargs.Data[k]
		}
	}
	return v
}

// mapToolCalls replaces a message's tool_calls, if it has a list of
// them, by f of each.
func mapToolCalls(msg *jinja.Dict, f func(call jinja.Value) jinja.Value) {
	calls, ok := msg.Get("tool_calls")
	if !ok || !calls.IsList() {
		return
	}
	out := make([]jinja.Value, len(calls.AsList().Items))
	for i, tc := range calls.AsList().Items {
		out[i] = f(tc)
	}
	msg.Set("tool_calls", jinja.NewList(out))
}

// parsedArguments is a tool call's JSON-string arguments parsed, as
// engines parse them for templates that print objects (only into an
// object, with objectsOnly, as vLLM does); anything else is itself.
func parsedArguments(args jinja.Value, objectsOnly, wrap bool) jinja.Value {
	if !args.IsString() {
		return args
	}
	parsed, _, err := decodeInts([]byte(args.AsString()), wrap)
	if err != nil || objectsOnly && !parsed.IsDict() {
		return args
	}
	return parsed
}
