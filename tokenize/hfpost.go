package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
)

// What a tokenizer adds around a text: tokenizer.json's post_processor,
// and tokenizer_config.json's add_bos_token, which transformers' Llama
// and Gemma tokenizer classes turn into a post-processor of their own.

type hfPostProcessor struct {
	Type       string             `json:"type"`
	Processors []*hfPostProcessor `json:"processors"`
	Single     []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *json.RawMessage `json:"Sequence"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int64 `json:"ids"`
	} `json:"special_tokens"`
}

// postPrefix returns how many tokens the post-processor p puts before a
// single sequence.
func postPrefix(p *hfPostProcessor) (int, error) {
	if p == nil {
		return 0, nil
	}
	switch p.Type {
	case "ByteLevel":
		return 0, nil
	case "BertProcessing", "RobertaProcessing":
		return 1, nil // [CLS] or <s>
	case "Sequence":
		n := 0
		for _, sub := range p.Processors {
			k, err := postPrefix(sub)
			if err != nil {
				return 0, err
			}
			n += k
		}
		return n, nil
	case "TemplateProcessing":
		n := 0
		for _, piece := range p.Single {
			if piece.Sequence != nil {
				break
			}
			if piece.SpecialToken == nil {
				return 0, fmt.Errorf("TemplateProcessing: a piece of single is neither SpecialToken nor Sequence")
			}
			st, ok := p.SpecialTokens[piece.SpecialToken.ID]
			if !ok {
				return 0, fmt.Errorf("TemplateProcessing: special token %q not in special_tokens", piece.SpecialToken.ID)
			}
			n += len(st.IDs)
		}
		return n, nil
	}
	return 0, unsupported("post_processor %q", p.Type)
}

// hfConfig is the part of tokenizer_config.json that says whether a BOS is
// added.
type hfConfig struct {
	AddBOS   *bool           `json:"add_bos_token"`
	BOSToken json.RawMessage `json:"bos_token"` // a string, an AddedToken object, or null
}

// hasBOS reports whether the config names a BOS token.
func (c *hfConfig) hasBOS() bool {
	s := strings.TrimSpace(string(c.BOSToken))
	return s != "" && s != "null" && s != `""`
}

func parseConfig(data []byte) (*hfConfig, error) {
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("parsing tokenizer_config.json: %w", err)
	}
	return &c, nil
}
