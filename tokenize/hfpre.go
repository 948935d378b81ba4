package tokenize

import (
	"strings"
)

// preStep is one pre-tokenizer of a tokenizer.json: it cuts a piece into
// smaller ones. first says whether the piece starts the text (after added
// tokens are cut out); the pieces it emits say the same of themselves.
// Empty pieces are never emitted.
type preStep interface {
	split(s string, first bool, emit func(piece string, first bool))
}

type hfPreTokenizer struct {
	Type           string            `json:"type"`
	PreTokenizers  []*hfPreTokenizer `json:"pretokenizers"`
	Pattern        *hfPattern        `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Replacement    string            `json:"replacement"`
	PrependScheme  string            `json:"prepend_scheme"`
	Split          *bool             `json:"split"`
}

type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

// parsePreTokenizer returns the steps of p, and whether the last is
// ByteLevel (which makes the model byte-level).
func parsePreTokenizer(p *hfPreTokenizer) (steps []preStep, byteLevel bool, err error) {
	if p == nil {
		return nil, false, nil
	}
	list := []*hfPreTokenizer{p}
	if p.Type == "Sequence" {
		list = p.PreTokenizers
	}
	for _, s := range list {
		if s == nil {
			return nil, false, unsupported("null pre-tokenizer")
		}
		if byteLevel {
			return nil, false, unsupported("pre-tokenizer after ByteLevel")
		}
		switch s.Type {
		case "Split":
			st, err := newSplitStep(s)
			if err != nil {
				return nil, false, err
			}
			steps = append(steps, st)
		case "ByteLevel":
			bl := byteLevelStep{prefixSpace: s.AddPrefixSpace != nil && *s.AddPrefixSpace}
			if s.UseRegex == nil || *s.UseRegex { // the library's default is true
				re, err := newRegexSplitter(gpt2Pattern, isolated)
				if err != nil {
					return nil, false, err
				}
				bl.split2 = re
			}
			steps = append(steps, bl)
			byteLevel = true
		case "Metaspace":
			ms, err := newMetaspace(s)
			if err != nil {
				return nil, false, err
			}
			steps = append(steps, ms)
		default:
			return nil, false, unsupported("pre-tokenizer %q (only Split, ByteLevel, Metaspace)", s.Type)
		}
	}
	return steps, byteLevel, nil
}

// behavior is a Split's SplitDelimiterBehavior: what becomes of a match.
type behavior uint8

const (
	isolated           behavior = iota // a piece of its own
	removed                            // dropped
	mergedWithPrevious                 // appended to the piece before it
	mergedWithNext                     // prepended to the piece after it
)

var behaviors = map[string]behavior{
	"Isolated": isolated, "Removed": removed,
	"MergedWithPrevious": mergedWithPrevious, "MergedWithNext": mergedWithNext,
}

// splitStep is a Split pre-tokenizer.
type splitStep struct{ sp splitter }

func newSplitStep(s *hfPreTokenizer) (preStep, error) {
	b, ok := behaviors[s.Behavior]
	if !ok || s.Invert {
		return nil, unsupported("Split behavior %q invert %v (only Isolated, Removed, MergedWithPrevious, MergedWithNext)", s.Behavior, s.Invert)
	}
	sp, err := splitterFor(s.Pattern, b)
	if err != nil {
		return nil, err
	}
	return splitStep{sp}, nil
}

func (st splitStep) split(s string, first bool, emit func(string, bool)) {
	// The first piece starts where s does; with Removed it may not, but
	// only Metaspace asks, and never after a Removed split in real files.
	st.sp.split(s, func(piece string) {
		emit(piece, first)
		first = false
	})
}

// byteLevelStep is the ByteLevel pre-tokenizer. Its byte-to-rune mapping
// is the model's business (bpeModel.byteLevel); here it only adds the
// prefix space and splits with GPT-2's regex.
type byteLevelStep struct {
	prefixSpace bool
	split2      splitter // GPT-2's regex (use_regex), or nil
}

func (bl byteLevelStep) split(s string, first bool, emit func(string, bool)) {
	if bl.prefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	if bl.split2 == nil {
		emit(s, first)
		return
	}
	bl.split2.split(s, func(piece string) {
		emit(piece, first)
		first = false
	})
}

// metaspace is the Metaspace pre-tokenizer of SentencePiece-style
// tokenizers: spaces become the replacement ("▁"), which is prepended
// (always, to the first piece only, or never), and with split the text is
// cut before each replacement.
type metaspace struct {
	repl    string
	prepend string // "always", "first" or "never"
	cut     bool
}

func newMetaspace(s *hfPreTokenizer) (preStep, error) {
	m := metaspace{repl: s.Replacement, prepend: s.PrependScheme, cut: s.Split == nil || *s.Split}
	if m.repl == "" {
		return nil, unsupported("Metaspace without a replacement")
	}
	if m.prepend == "" {
		// Files from before prepend_scheme say add_prefix_space.
		m.prepend = "always"
		if s.AddPrefixSpace != nil && !*s.AddPrefixSpace {
			m.prepend = "never"
		}
	}
	switch m.prepend {
	case "always", "first", "never":
	default:
		return nil, unsupported("Metaspace prepend_scheme %q", m.prepend)
	}
	return m, nil
}

func (m metaspace) split(s string, first bool, emit func(string, bool)) {
	s = strings.ReplaceAll(s, " ", m.repl)
	if (m.prepend == "always" || (m.prepend == "first" && first)) && !strings.HasPrefix(s, m.repl) {
		s = m.repl + s
	}
	if !m.cut {
		emit(s, first)
		return
	}
	last := 0
	for i := 0; ; {
		k := strings.Index(s[i:], m.repl)
		if k < 0 {
			break
		}
		i += k
		if i > last {
			emit(s[last:i], first && last == 0)
			last = i
		}
		i += len(m.repl)
	}
	emit(s[last:], first && last == 0)
}
