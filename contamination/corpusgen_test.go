package contamination

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// corpus generates realistic, distinct, deterministic prompts and responses
// for the false-alarm and detection measurements: English-like sentences
// from a Zipf-weighted lexicon (testdata/lexicon.txt), invented names,
// numbers and nonces, shared system prompts, a shared pool of documents that
// several prompts quote (retrieval), code snippets with common idioms, chat
// histories that hold the generic phrases assistants answer with.
type corpus struct {
	r     *rand.Rand
	words map[string][]string
	zipf  map[string]*rand.Zipf
	docs  []string // shared documents quoted by several prompts
	// tail is the share of content words drawn from a long tail of rare
	// (invented) words instead of the lexicon. Real English draws about a
	// quarter of its running words from outside its 1,000 most common; 0
	// makes a harder corpus where every sentence is common words.
	tail float64
}

func newCorpus(t testing.TB, seed uint64, tail float64) *corpus {
	t.Helper()
	raw, err := os.ReadFile("testdata/lexicon.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := &corpus{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), tail: tail, words: map[string][]string{}, zipf: map[string]*rand.Zipf{}}
	for _, line := range strings.Split(string(raw), "\n") {
		class, list, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		ws := strings.Fields(list)
		c.words[class] = ws
		c.zipf[class] = rand.NewZipf(c.r, 1.07, 2, uint64(len(ws)-1))
	}
	for range 40 {
		c.docs = append(c.docs, c.paragraph(5))
	}
	return c
}

func (c *corpus) w(class string) string {
	switch class {
	case "noun", "verb", "adj", "adv":
		if c.r.Float64() < c.tail {
			return strings.ToLower(c.name())
		}
	}
	return c.words[class][c.zipf[class].Uint64()]
}

var syllables = strings.Fields("ka ri mo ten vel sar lo quin dra bel or mun tis ga phe ro zan ul ek ith bra nor cy dol ves hal pri om")

// name is an invented word, capitalised: about 28^4 of them.
func (c *corpus) name() string {
	var b strings.Builder
	for range 2 + c.r.IntN(3) {
		b.WriteString(syllables[c.r.IntN(len(syllables))])
	}
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func (c *corpus) nonce() string { return fmt.Sprintf("%08x", c.r.Uint32()) }

func (c *corpus) verb() string {
	v := c.w("verb")
	switch c.r.IntN(3) {
	case 0:
		return v + "s"
	case 1:
		return v + "ed"
	}
	return v
}

func (c *corpus) sentence() string {
	var s string
	switch c.r.IntN(8) {
	case 0:
		s = fmt.Sprintf("%s %s %s %s %s %s %s %s", c.w("det"), c.w("adj"), c.w("noun"), c.verb(), c.w("det"), c.w("noun"), c.w("prep"), c.w("noun"))
	case 1:
		s = fmt.Sprintf("%s %s the %s %s %s in %d", c.name(), c.verb(), c.w("noun"), c.w("prep"), c.name(), 1990+c.r.IntN(40))
	case 2:
		s = fmt.Sprintf("%s, %s %s %s %s %s %s %s %s %s", c.w("adv"), c.w("det"), c.w("noun"), c.verb(), c.w("det"), c.w("adj"), c.w("noun"), c.w("conj"), c.w("pron"), c.verb())
	case 3:
		s = fmt.Sprintf("%s %s %s %s %s %s is %s", c.w("det"), c.w("noun"), c.w("prep"), c.w("det"), c.w("adj"), c.w("noun"), c.w("adj"))
	case 4:
		s = fmt.Sprintf("%s %s %s %s %s %s %s %s", c.w("pron"), c.verb(), c.w("det"), c.w("adj"), c.w("noun"), c.w("prep"), c.w("det"), c.w("noun"))
	case 5:
		s = fmt.Sprintf("the %s of %s is %d %s", c.w("noun"), c.name(), c.r.IntN(1000), c.w("noun"))
	case 6:
		s = fmt.Sprintf("order %s for %s %s was %s to %s on %d %s", c.nonce(), c.name(), c.name(), c.verb(), c.name(), 1+c.r.IntN(28), c.w("noun"))
	default:
		s = fmt.Sprintf("%s %s %s %s %s %s %s", c.w("conj"), c.w("pron"), c.verb(), c.w("prep"), c.w("det"), c.w("noun"), c.w("adv"))
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func (c *corpus) paragraph(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.sentence())
	}
	return b.String()
}

func (c *corpus) code() string {
	fn, arg, arg2 := c.w("verb")+"_"+c.w("noun"), c.w("noun")+"s", c.w("noun")
	return fmt.Sprintf("def %s(%s, %s=None):\n    result = []\n    for i in range(len(%s)):\n        if %s[i] > %d:\n            result.append(%s[i] * %d)\n    return result\n",
		fn, arg, arg2, arg, arg, c.r.IntN(100), arg, 2+c.r.IntN(9))
}

var (
	systemPrompts = []string{
		"You are a helpful assistant.",
		"You are a helpful assistant. Answer concisely and accurately.",
		"You are an expert software engineer. Explain your reasoning step by step and keep code idiomatic.",
		"You are a customer support agent for an online store. Be polite, never promise refunds, and ask for the order number.",
		"",
	}
	openers = []string{
		"Sure! Here is a summary of the main points:", "Certainly. Here is a more polite version of your email:",
		"Here is the corrected code:", "Great question.", "Let me explain step by step.", "Of course.",
		"Thank you for reaching out.", "Based on the documents you provided,", "The main difference is the following.",
		"I am sorry to hear about the problem with your order.",
	}
	closers = []string{
		"I hope this helps! Let me know if you have any other questions.", "Feel free to ask if you need anything else.",
		"Let me know if you would like me to make any further changes.", "Is there anything else I can help you with today?",
		"In summary, the key points are listed above.", "Please let me know if you need more details.",
	}
	codeLines = []string{
		"if not items:\n    return None\n", "for i in range(len(items)):\n", "return result\n", "import numpy as np\n",
		"except Exception as e:\n    print(e)\n",
	}
)

func (c *corpus) pick(list []string) string { return list[c.r.IntN(len(list))] }

// prompt returns a prompt and the body text a leak test may quote from it
// (the part that is the user's own data, not a shared template).
func (c *corpus) prompt() (prompt, body string) {
	sys := c.pick(systemPrompts)
	var user string
	switch c.r.IntN(8) {
	case 0:
		body = c.paragraph(4 + c.r.IntN(5))
		user = "Summarize the following text in three bullet points:\n\n" + body
	case 1:
		body = c.paragraph(3 + c.r.IntN(3))
		user = "Here is my email draft:\n\nDear " + c.name() + ",\n" + body + "\nBest regards,\n" + c.name() + "\n\nCan you make it more polite and concise?"
	case 2:
		body = c.code()
		user = "Why does this function fail when the list is empty?\n```python\n" + body + "```"
	case 3:
		// All template: no data of the user's to leak.
		user = fmt.Sprintf("What is the difference between a %s and a %s in the context of %s %s?", c.w("noun"), c.w("noun"), c.w("adj"), c.w("noun"))
	case 4:
		body = c.sentence() + " " + c.sentence()
		user = "Translate into French: " + body
	case 5:
		body = c.sentence()
		user = "User: " + c.sentence() + "\nAssistant: " + c.pick(openers) + " " + c.sentence() + " " + c.pick(closers) + "\nUser: " + body
	case 6:
		body = fmt.Sprintf("Order %s-%s for customer %s %s has not arrived. ", strings.ToUpper(c.nonce()), c.nonce(), c.name(), c.name()) + c.paragraph(2)
		user = body + " What should I do?"
	default:
		body = c.sentence() + " " + c.paragraph(2)
		user = "Use the following documents to answer.\n[1] " + c.pick(c.docs) + "\n[2] " + c.pick(c.docs) + "\nQuestion: " + body
	}
	if sys == "" {
		return user, body
	}
	return "System: " + sys + "\nUser: " + user, body
}

// span returns n consecutive words of text (fewer if it is shorter).
func (c *corpus) span(text string, n int) string {
	ws := strings.Fields(text)
	if len(ws) <= n {
		return strings.Join(ws, " ")
	}
	i := c.r.IntN(len(ws) - n + 1)
	return strings.Join(ws[i:i+n], " ")
}

// response is a clean answer to prompt: a generic opener, spans echoed from
// the prompt, new sentences, a generic line of code or closer.
func (c *corpus) response(prompt string) string {
	var b strings.Builder
	b.WriteString(c.pick(openers))
	for range 1 + c.r.IntN(3) {
		b.WriteString("\n- ")
		b.WriteString(c.span(prompt, 5+c.r.IntN(20)))
	}
	for range c.r.IntN(4) {
		b.WriteByte(' ')
		b.WriteString(c.sentence())
	}
	if c.r.IntN(4) == 0 {
		b.WriteString("\n```python\n" + c.pick(codeLines) + "```\n")
	}
	b.WriteString("\n" + c.pick(closers))
	return b.String()
}
