package accounting

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-gateway/custody/template"
)

// LoadTemplate resolves a model's chat_template setting: none; auto (the
// chat_template of tokenizer_config.json beside a file: tokenizer, none
// without one, and the simulator's builtin:chatml for a model served
// only by simulators); file:PATH (a tokenizer_config.json, or a Jinja
// file whose special tokens come from tokenizer_config.json beside the
// tokenizer, if there is one); builtin:NAME.
func LoadTemplate(tokenizer, chatTemplate string, simOnly bool) (*template.Template, error) {
	beside := ""
	if p, ok := strings.CutPrefix(tokenizer, "file:"); ok {
		beside = filepath.Join(filepath.Dir(p), "tokenizer_config.json")
	}
	switch {
	case chatTemplate == "none":
		return nil, nil
	case chatTemplate == "auto" || chatTemplate == "":
		if beside != "" {
			t, err := template.Load(beside)
			if errors.Is(err, template.ErrNoTemplate) || errors.Is(err, os.ErrNotExist) {
				return nil, nil
			}
			return t, err
		}
		if simOnly {
			return template.Builtin(template.BuiltinChatML)
		}
		return nil, nil
	case strings.HasPrefix(chatTemplate, "builtin:"):
		return template.Builtin(strings.TrimPrefix(chatTemplate, "builtin:"))
	case strings.HasPrefix(chatTemplate, "file:"):
		path := strings.TrimPrefix(chatTemplate, "file:")
		if strings.HasSuffix(path, ".json") {
			return template.Load(path)
		}
		var sp template.Special
		if beside != "" {
			if t, err := template.Load(beside); err == nil || errors.Is(err, template.ErrNoTemplate) {
				if t != nil {
					sp = template.Special{BOS: t.BOS(), EOS: t.EOS()}
				}
			}
		}
		return template.LoadFile(path, sp)
	}
	return nil, fmt.Errorf("chat_template %q is not auto, file:PATH, builtin:NAME or none", chatTemplate)
}
