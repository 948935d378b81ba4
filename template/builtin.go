package template

import (
	_ "embed"
	"fmt"
)

//go:embed chatml.jinja
var chatmlSource string

// Builtin names the templates custody ships (chat_template: builtin:NAME).
const BuiltinChatML = "chatml"

// Builtin returns a shipped template: chatml is the simulator's.
func Builtin(name string) (*Template, error) {
	switch name {
	case BuiltinChatML:
		return Parse(chatmlSource, Special{EOS: "<|im_end|>"})
	}
	return nil, fmt.Errorf("no built-in chat template %q (want chatml)", name)
}
