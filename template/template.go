package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ardanlabs/jinja"
)

// ErrNoTemplate is returned by Load when tokenizer_config.json holds no
// chat_template.
var ErrNoTemplate = errors.New("no chat_template in tokenizer_config.json")

// Template is a compiled chat template with the special tokens it is
// rendered with. It is safe for concurrent use.
type Template struct {
	src      string
	tmpl     *jinja.Template
	bos, eos string
	// bosValue and eosValue are bos and eos as the template's values,
	// made once rather than at every render.
	bosValue, eosValue jinja.Value
	// objectArgs: the template prints tool-call arguments given as an
	// object through tojson (llama.cpp then passes them parsed).
	objectArgs bool
	// partsContent: the template iterates over content parts, so vLLM
	// passes content as a list of parts rather than a string.
	partsContent bool
	// alwaysHeader: the template ends with the assistant header whether
	// or not add_generation_prompt is set (Llama-3's).
	alwaysHeader bool
}

// Special are the tokens a template refers to by name.
type Special struct {
	BOS, EOS string
}

// Parse compiles a chat template.
func Parse(src string, sp Special) (*Template, error) {
	tmpl, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("compiling chat template: %w", err)
	}
	t := &Template{src: src, tmpl: tmpl, bos: sp.BOS, eos: sp.EOS, bosValue: jinja.NewString(sp.BOS), eosValue: jinja.NewString(sp.EOS)}
	t.objectArgs = t.probeObjectArgs()
	t.alwaysHeader = t.probeAlwaysHeader()
	t.partsContent = t.probePartsContent()
	return t, nil
}

// Load reads the chat template and its special tokens from a
// tokenizer_config.json (path may name the file or the directory that
// holds it, as a Hugging Face model directory does).
func Load(path string) (*Template, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "tokenizer_config.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading chat template: %w", err)
	}
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Base(path), err)
	}
	src, err := chatTemplate(cfg.ChatTemplate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Parse(src, Special{BOS: tokenText(cfg.BOS), EOS: tokenText(cfg.EOS)})
}

// LoadFile reads a bare Jinja chat template (models[].chat_template:
// file:PATH); its special tokens come from sp.
func LoadFile(path string, sp Special) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading chat template: %w", err)
	}
	return Parse(string(data), sp)
}

// chatTemplate reads chat_template: a string, or a list of named
// templates of which "default" is the chat one.
func chatTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", ErrNoTemplate
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var named []struct{ Name, Template string }
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", errors.New("chat_template must be a string or a list of {name, template}")
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", ErrNoTemplate
}

// tokenText reads a special token: a string, or an AddedToken object
// with its content; null is "".
func tokenText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var tok struct{ Content string }
	if json.Unmarshal(raw, &tok) == nil {
		return tok.Content
	}
	return ""
}

// BOS is the template's beginning-of-sequence token text ("" for none).
func (t *Template) BOS() string { return t.bos }

// RaiseError is a template's own refusal (raise_exception): the engine
// refuses the request with this message, so custody does too.
type RaiseError struct{ Message string }

func (e *RaiseError) Error() string { return "chat template: " + e.Message }

// exec renders the template with vars.
func (t *Template) exec(vars map[string]jinja.Value) (string, error) {
	if _, ok := vars["bos_token"]; !ok {
		vars["bos_token"] = t.bosValue
	}
	if _, ok := vars["eos_token"]; !ok {
		vars["eos_token"] = t.eosValue
	}
	vars["raise_exception"] = raiseException
	out, err := t.tmpl.RenderValues(vars)
	if err != nil {
		var re *RaiseError
		if errors.As(err, &re) {
			return "", re
		}
		return "", fmt.Errorf("rendering chat template: %w", err)
	}
	return out, nil
}

// raiseException replaces the engine's raise_exception so that a
// template's refusal is told apart from a failure to render.
var raiseException = jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	msg := "the chat template refused the request"
	if len(args) > 0 && args[0].IsString() {
		msg = args[0].AsString()
	}
	return jinja.Undefined(), &RaiseError{Message: msg}
})

// probeObjectArgs reports whether the template prints tool-call
// arguments given as an object (as JSON), the capability llama.cpp
// looks for before it parses a client's argument strings.
func (t *Template) probeObjectArgs() bool {
	const needle = "custody_argument_needle"
	args := dict(needle, "x")
	msgs := jinja.NewList([]jinja.Value{
		dict("role", "user", "content", "hi"),
		dict("role", "assistant", "content", "", "tool_calls", jinja.NewList([]jinja.Value{
			dict("type", "function", "id", "call_1", "function", dict("name", "f", "arguments", args)),
		})),
	})
	out, err := t.exec(map[string]jinja.Value{"messages": msgs, "add_generation_prompt": jinja.NewBool(false)})
	return err == nil && strings.Contains(out, `"`+needle+`"`)
}

// probeAlwaysHeader reports whether the template ends a conversation
// with the same text with and without add_generation_prompt.
func (t *Template) probeAlwaysHeader() bool {
	msgs := jinja.NewList([]jinja.Value{dict("role", "user", "content", "hi")})
	with, err1 := t.exec(map[string]jinja.Value{"messages": msgs, "add_generation_prompt": jinja.NewBool(true)})
	without, err2 := t.exec(map[string]jinja.Value{"messages": msgs, "add_generation_prompt": jinja.NewBool(false)})
	return err1 == nil && err2 == nil && with == without
}

// probePartsContent reports whether the template renders content given
// as a list of parts by their text, as vLLM decides by looking for a loop
// over content: such a template gets lists, any other a joined string.
func (t *Template) probePartsContent() bool {
	const needle = "custody_part_needle"
	msgs := jinja.NewList([]jinja.Value{
		dict("role", "user", "content", jinja.NewList([]jinja.Value{dict("type", "text", "text", needle)})),
	})
	out, err := t.exec(map[string]jinja.Value{"messages": msgs, "add_generation_prompt": jinja.NewBool(true)})
	return err == nil && strings.Contains(out, needle) && !strings.Contains(out, "type")
}

// IsRaise reports whether err is a template's own refusal.
func IsRaise(err error) bool {
	var re *RaiseError
	return errors.As(err, &re)
}

// EOS is the template's end-of-sequence token text.
func (t *Template) EOS() string { return t.eos }
