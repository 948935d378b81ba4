// Package accounting turns a request into the band of prompt tokens an
// honest upstream may report for it: exact where custody renders the
// prompt as the engine does, a sound lower and upper bound where it
// cannot.
//
// Three cases, from the most to the least exact:
//   - a chat template and a named engine (llamacpp, vllm, sglang): the
//     prompt is rendered as that engine renders it and counted with
//     special tokens parsed; the band is [n, n + RenderedSlack];
//   - a chat template and an unnamed engine (auto): every known engine's
//     rendering is counted and the band spans them, so none of them is a
//     false alarm;
//   - no template (OpenAI and its family, or chat_template: none): the
//     lower bound counts only text every rendering certainly contains
//     (message content, trimmed; no names, no tool calls, no framing),
//     the upper bound OpenAI's per-message framing plus names, tool calls,
//     tool definitions, media and the configured slack.
//
// Media parts widen only the upper bound: what an image costs depends on
// the engine's processor, and a remote image's size is unknown.
//
// Work is split in two: Prepare renders (cheap, and where a template
// refuses a request, which must then not be forwarded), Count tokenizes
// (the slow part, which runs beside forwarding).
package accounting

import (
	"strings"

	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

// MaxMediaTokens is what one image or audio part may add to a prompt at
// most (a high-resolution image under a dynamic-resolution processor is a
// few thousand tokens; this leaves room).
const MaxMediaTokens = 16384

// MaxRenderedBody is the largest chat body rendered through its
// template. A template's string concatenations copy the prompt several
// times over (a 30 MB body took 1.8 s and 440 MB); above this size the
// template's few tokens are lost in the prompt's, and the untemplated
// bounds serve: sound, and still far from a placeholder's count or a
// truncated prompt's.
const MaxRenderedBody = 1 << 20

// RenderedSlack is the band above a rendered prompt's exact count: room
// for a BOS an engine adds that the template does not write, and nothing
// else (custody's count equals llama.cpp's and the vLLM emulation's on
// every request of the chat-template corpus).
const RenderedSlack = 4

// Allowances of the template-less upper bound beyond the text counted:
// the framing of a tool call and of a tool definition, and the
// instructions a template writes once when a request has tools (Qwen3's
// are about 110 tokens).
const (
	toolCallAllowance = 8
	toolAllowance     = 16
	toolsPreamble     = 256
)

// Slack widens the band of a prompt custody does not render: PerMessage
// for each message (or completions text) and Fixed once.
type Slack struct{ PerMessage, Fixed int }

// Model is how one model's prompts are counted. Safe for concurrent use.
type Model struct {
	// Counter is the model's tokenizer as Hugging Face runs it.
	Counter tokenize.Counter
	// LlamaCpp is the tokenizer as llama.cpp runs it, where it differs
	// (nil: the same as Counter).
	LlamaCpp tokenize.Counter
	// Template is the model's chat template; nil counts chat without one.
	Template *template.Template
	Slack    Slack
}

// Count is the outcome of counting one prompt for one engine.
type Count struct {
	// Local is custody's count, as recorded: the exact count where the
	// prompt was rendered (the least, for auto), OpenAI's documented
	// framing for chat without a template.
	Local int
	Band  Band
}

// NewModel is the accounting of a model counted by c (and, where c is a
// Hugging Face tokenizer, by its llama.cpp variant for llama.cpp routes)
// with its chat template tmpl (nil: none).
func NewModel(c tokenize.Counter, tmpl *template.Template, slack Slack) *Model {
	m := &Model{Counter: c, Template: tmpl, Slack: slack}
	if hf, ok := c.(*tokenize.HFTokenizer); ok {
		m.LlamaCpp = hf.LlamaCpp()
	}
	return m
}

func (m *Model) upperBound() bool {
	ub, ok := m.Counter.(tokenize.UpperBound)
	return ok && ub.UpperBound()
}

// Prepared is a prompt rendered for the engines it may be sent to,
// waiting to be counted.
type Prepared struct {
	m       *Model
	prompt  *openai.Prompt
	perText bool // a completions prompt: each text may be framed
	// untemplated: an engine asked for counts without the template.
	untemplated bool
	// renders per engine asked for; nil for an untemplated prompt.
	renders map[template.Engine][]rendering
	// Unrendered is why a prompt with a template was counted without it:
	// the template failed on it for a reason of its own engine's (a
	// feature custody's Jinja engine lacks, say), which is no ground to
	// refuse the request. Its text may quote the prompt: not for logs.
	Unrendered error
}

// rendering is one way an engine may have rendered the prompt.
type rendering struct {
	text    string
	media   int
	counter tokenize.Counter
	prefix  int             // tokens the engine adds before the text (a BOS)
	as      template.Engine // the rendering (one of llama.cpp's, say)
}

// PrepareChat renders a chat request (p parsed from body) for each of
// engines. A template's refusal is a *template.RaiseError: for a named
// engine when it refuses, for auto when every engine's rendering does.
// Any other failure to render counts the prompt untemplated (see
// Prepared.Unrendered).
func (m *Model) PrepareChat(engines []template.Engine, p *openai.Prompt, body []byte) (*Prepared, error) {
	pp := &Prepared{m: m, prompt: p}
	if m.Template == nil || m.upperBound() || len(body) > MaxRenderedBody {
		return pp, nil
	}
	req, err := template.ParseRequest(body)
	if err != nil {
		pp.Unrendered = err
		return pp, nil
	}
	renders := map[template.Engine][]rendering{}
	for _, e := range engines {
		if e == template.EngineOpenAI {
			pp.untemplated = true
			continue
		}
		if _, done := renders[e]; done {
			continue
		}
		rs, err := m.render(e, req)
		if template.IsRaise(err) {
			return nil, err
		}
		if err != nil {
			pp.Unrendered = err
			return pp, nil
		}
		renders[e] = rs
	}
	pp.renders = renders
	return pp, nil
}

// render renders req as engine e may: auto is every engine custody
// reproduces, counted by each tokenizer variant; llamacpp is both of
// llama.cpp's renderings where they differ on req.
func (m *Model) render(e template.Engine, req *template.Request) ([]rendering, error) {
	engines := m.Template.Renderings(e, req)
	var (
		out     []rendering
		refusal error
	)
	for _, en := range engines {
		p, err := m.Template.RenderRequest(en, req)
		if err != nil {
			if e == template.EngineAuto && template.IsRaise(err) {
				refusal = err
				continue
			}
			return nil, err
		}
		counters := []tokenize.Counter{m.Counter}
		switch {
		case m.LlamaCpp == nil:
		case e == template.EngineAuto:
			counters = append(counters, m.LlamaCpp)
		case en == template.EngineLlamaCpp || en.LlamaCppRendering():
			counters = []tokenize.Counter{m.LlamaCpp}
		}
		for _, c := range counters {
			r := rendering{text: p.Text, media: p.Media, counter: c, as: en}
			if c == m.LlamaCpp {
				r.prefix = llamaPrefix(c, p.Text, m.Template.BOS())
			}
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, refusal
	}
	return out, nil
}

// Bytes is the longest the prompt may be in bytes: the longest rendering,
// or the body for a prompt custody does not render. No prompt has more
// tokens than bytes (see check.MustCount).
func (pp *Prepared) Bytes(body []byte) int {
	n := len(body)
	for _, rs := range pp.renders {
		for _, r := range rs {
			n = max(n, len(r.text))
		}
	}
	return n
}

// llamaPrefix is the BOS llama.cpp adds to a chat prompt: the one its
// vocabulary asks for, unless the rendered prompt already starts with it
// (the five templates of the corpus write their BOS; llama.cpp then does
// not add a second).
func llamaPrefix(c tokenize.Counter, text, bos string) int {
	sp, ok := c.(interface{ SpecialPrefix() int })
	if !ok || sp.SpecialPrefix() == 0 || bos != "" && strings.HasPrefix(text, bos) {
		return 0
	}
	return sp.SpecialPrefix()
}

// Text is a rendering of the prompt, and whether there is one: the text
// an engine's prompt cache holds the prefixes of.
func (pp *Prepared) Text() (string, bool) {
	for _, e := range template.Engines {
		if rs := pp.renders[e]; len(rs) > 0 {
			return rs[0].text, true
		}
	}
	for _, rs := range pp.renders {
		if len(rs) > 0 {
			return rs[0].text, true
		}
	}
	return "", false
}

// PrepareText takes a completions prompt (perText) or an embeddings
// input.
func (m *Model) PrepareText(p *openai.Prompt, perText bool) *Prepared {
	return &Prepared{m: m, prompt: p, perText: perText}
}

// Counts are a prepared prompt's counts, per engine.
type Counts struct {
	byEngine map[template.Engine]Count
	other    Count // untemplated, and engines not prepared
	// untemplated: some engine asked for is counted without its
	// template (openai), so other is one of the counts.
	untemplated bool
}

// For returns the count for engine e. One of llama.cpp's renderings
// not prepared on its own is counted as llamacpp was.
func (c Counts) For(e template.Engine) Count {
	if n, ok := c.byEngine[e]; ok {
		return n
	}
	if n, ok := c.byEngine[template.EngineLlamaCpp]; ok && e.LlamaCppRendering() {
		return n
	}
	return c.other
}

// Least is the smallest count over the engines the prompt was prepared
// for: what the capacity check may hold a prompt to without refusing one
// that fits.
func (c Counts) Least() int {
	if len(c.byEngine) == 0 {
		return c.other.Local
	}
	n := -1
	for _, e := range c.byEngine {
		if n < 0 || e.Local < n {
			n = e.Local
		}
	}
	if c.untemplated {
		n = min(n, c.other.Local)
	}
	return n
}

// Count tokenizes the prepared prompt.
func (pp *Prepared) Count() Counts {
	m, p := pp.m, pp.prompt
	if len(p.Messages) == 0 {
		return Counts{other: m.text(p, pp.perText)}
	}
	c := Counts{other: m.untemplated(p), untemplated: pp.untemplated}
	if len(pp.renders) == 0 {
		return c
	}
	c.byEngine = map[template.Engine]Count{}
	counted := map[tokenize.Counter]map[string]int{}
	count := func(r rendering) int {
		byText := counted[r.counter]
		if byText == nil {
			byText = map[string]int{}
			counted[r.counter] = byText
		}
		n, ok := byText[r.text]
		if !ok {
			n = r.counter.Count(r.text)
			byText[r.text] = n
		}
		return n + r.prefix
	}
	span := func(rs []rendering, auto bool) Count {
		lo, hi, bandLo := -1, -1, -1
		for _, r := range rs {
			n := count(r)
			// A text past tokenize.MaxPiece is counted in chunks: the
			// engine's count may be that far off.
			cs := tokenize.ChunkSlack(len(r.text))
			if lo < 0 || n < lo {
				lo = n
			}
			if bandLo < 0 || n-cs < bandLo {
				bandLo = max(n-cs, 0)
			}
			hi = max(hi, n+cs+r.media*MaxMediaTokens)
		}
		if auto && m.Template.BOS() == "" {
			hi++ // an engine may add a BOS the template does not write
		}
		return Count{Local: lo, Band: Band{Lo: bandLo, Hi: hi + RenderedSlack}}
	}
	for e, rs := range pp.renders {
		c.byEngine[e] = span(rs, e == template.EngineAuto)
		if e != template.EngineLlamaCpp {
			continue
		}
		// Each of llama.cpp's renderings on its own, for an upstream
		// whose build is known: exact where llamacpp spans both.
		for _, as := range []template.Engine{template.EngineLlamaCppShortest, template.EngineLlamaCppStream} {
			var sub []rendering
			for _, r := range rs {
				if r.as == as {
					sub = append(sub, r)
				}
			}
			if _, done := c.byEngine[as]; len(sub) > 0 && !done {
				c.byEngine[as] = span(sub, false)
			}
		}
	}
	return c
}

// Exceeds reports whether every count the prompt may have is above
// limit, counting no further than deciding that takes (a 32 MiB prompt
// is refused after its first limit tokens): what the capacity preflight
// refuses on, before forwarding. least is the least count found: exact
// when it is at most limit, else a count above it.
func (pp *Prepared) Exceeds(limit int) (least int, over bool) {
	m, p := pp.m, pp.prompt
	least = -1
	note := func(n int) {
		if least < 0 || n < least {
			least = n
		}
	}
	if len(p.Messages) == 0 || len(pp.renders) == 0 || pp.untemplated {
		n := p.PreTokenized
		if len(p.Messages) > 0 {
			n += tokenize.ReplyPriming
		}
		for _, msg := range p.Messages {
			n += tokenize.TokensPerMessage + m.Counter.Count(msg.Role)
			c, _ := tokenize.CountUpTo(m.Counter, msg.Content, max(limit-n, 0))
			if n += c; n > limit {
				break
			}
		}
		for _, t := range p.Texts {
			c, _ := tokenize.CountUpTo(m.Counter, t, max(limit-n, 0))
			if n += c; n > limit {
				break
			}
		}
		note(n)
	}
	for _, rs := range pp.renders {
		for _, r := range rs {
			n, _ := tokenize.CountUpTo(r.counter, r.text, max(limit-r.prefix, 0))
			note(n + r.prefix)
		}
	}
	return least, least > limit
}

// untemplated bounds a chat prompt whose rendering custody cannot see.
func (m *Model) untemplated(p *openai.Prompt) Count {
	c := m.Counter
	lo, framed := 0, tokenize.ReplyPriming
	for _, msg := range p.Messages {
		text := msg.Content
		switch msg.Role {
		case "system", "user", "tool":
		case "assistant":
			// Templates drop the reasoning of earlier turns (Qwen3), and
			// engines' reasoning parsers strip it: not certain text.
			text = withoutThinking(text)
		default:
			// A template may ignore a role it does not know (developer,
			// under vLLM): not certain text.
			text = ""
		}
		lo += c.Count(strings.TrimSpace(text))
		framed += tokenize.TokensPerMessage + c.Count(msg.Role) + c.Count(msg.Content)
		if msg.Name != "" {
			framed += tokenize.TokensPerName + c.Count(msg.Name)
		}
	}
	hi := framed
	for _, msg := range p.Messages {
		if msg.ToolCalls != "" || msg.Calls > 0 {
			hi += toolCallAllowance*msg.Calls + c.Count(msg.ToolCalls)
		}
	}
	if p.Tools != "" {
		n := c.Count(p.Tools)
		if spaced, err := template.TemplateJSON([]byte(p.Tools)); err == nil {
			// A template prints the definitions with Python's spacing.
			n = max(n, c.Count(spaced))
		}
		hi += toolsPreamble + toolAllowance*p.ToolCount + n
	}
	hi += p.Media*MaxMediaTokens + m.Slack.PerMessage*len(p.Messages) + m.Slack.Fixed
	if m.upperBound() {
		// A count that bounds from above proves only a crude lower
		// bound (see PromptBand).
		lo /= 32
	}
	cs := tokenize.ChunkSlack(p.Len())
	return Count{Local: framed, Band: Band{Lo: max(lo-cs, 0), Hi: hi + cs}}
}

// text counts a completions prompt or an embeddings input: its texts and
// pre-tokenized ids.
func (m *Model) text(p *openai.Prompt, perText bool) Count {
	n := p.PreTokenized
	for _, t := range p.Texts {
		n += m.Counter.Count(t)
	}
	per := 0
	if perText {
		per = m.Slack.PerMessage
	}
	b := PromptBand(n, m.upperBound(), p.Parts(), per, m.Slack.Fixed)
	cs := tokenize.ChunkSlack(p.Len())
	return Count{Local: n, Band: Band{Lo: max(b.Lo-cs, 0), Hi: b.Hi + cs}}
}

// withoutThinking removes <think>…</think> blocks (and a leading
// unclosed reasoning up to </think>) from an assistant message.
func withoutThinking(s string) string {
	for {
		end := strings.Index(s, "</think>")
		if end < 0 {
			return s
		}
		start := strings.LastIndex(s[:end], "<think>")
		if start < 0 {
			start = 0
		}
		s = s[:start] + s[end+len("</think>"):]
	}
}
