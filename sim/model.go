package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// The toy model. It sees nothing but the words decode read from the KV
// pages, so whatever those pages hold, its own prompt or another
// request's, shapes the answer:
//
//  1. every nonce-like word in the pages (isNonce), in order, is echoed
//     (last first by the snapshots of snapshot-drift and model-lie);
//  2. then, step by step, a word is chosen among candidates: the next word
//     of the context after the last one quoted (so runs of the context are
//     quoted), a word of the context picked by hash, a fixed vocabulary, and
//     an end-of-text whose logit grows with length. Logits are hashes of
//     (context digest, step, candidate), so the answer is a deterministic
//     function of the page contents.
//
// A variant n > 0 adds a small variant-specific perturbation to every
// logit: its logprobs differ by up to variantEps and its argmax differs at
// a few steps per answer, so a statistical test over many answers tells it
// apart while a single answer looks like the honest model's.

// vocabulary is the toy model's own words: unusual enough that they do not
// look like any user's text.
var vocabulary = [...]string{
	"quorra", "velmat", "ostrin", "pallude", "cerrow", "mivane", "tolvik", "arbeth",
	"senquil", "dorvast", "lumire", "kethra", "wyndle", "falmor", "ruvice", "nesbar",
	"ildren", "gossamyr", "taviel", "borrund", "emvale", "sorbeck", "ulthane", "parvise",
	"hestrel", "cindrow", "maelor", "tessivar", "orlume", "zanthe", "quellis", "bravoth",
}

const (
	placeholderWord = "<|placeholder|>"
	variantEps      = 0.02
	nonceMinLen     = 8
)

// genParams are the sampling parameters of one request.
type genParams struct {
	maxTokens   int
	temperature float64
	seed        *int64
	noSeed      uint64 // sampling seed when temperature > 0 and seed is nil
	topLogprobs int    // alternatives to report per token (0..20)
	// codesLastFirst: the model repeats the prompt's nonce-like codes in
	// reverse order (the drifted and lying snapshots do: a behaviour an
	// evaluation that asks for the codes in order sees in one answer).
	codesLastFirst bool
}

// genToken is one generated token: its text (with its leading space), its
// logprob and the top alternatives.
type genToken struct {
	text    string
	logprob float64
	top     []genAlt
}

type genAlt struct {
	text    string
	logprob float64
}

// digest is the context digest the logits hash from.
func digest(words []string) uint64 {
	h := fnv.New64a()
	for _, w := range words {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// isNonce reports whether w (stripped of surrounding punctuation) is a
// random-looking token: at least 8 characters, letters and digits only,
// with both.
func isNonce(w string) bool {
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(w) < nonceMinLen {
		return false
	}
	var letter, digit bool
	for _, r := range w {
		switch {
		case r < 128 && unicode.IsLetter(r):
			letter = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			return false
		}
	}
	return letter && digit
}

func trimNonce(w string) string {
	return strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// mix hashes its arguments into a uniform uint64 (splitmix64 rounds).
func mix(vs ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range vs {
		h ^= v
		h += 0x9e3779b97f4a7c15
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
		h = (h ^ (h >> 27)) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

func unit(v uint64) float64 { return float64(v>>11) / (1 << 53) }

func strHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

type candidate struct {
	word  string
	logit float64
	pos   int // context position quoted, or -1
	eos   bool
}

// generate runs the toy model over context (the words read from the KV
// pages) and returns the tokens and the finish reason ("stop" or "length").
func generate(context []string, variant int, p genParams) ([]genToken, string) {
	h := digest(context)
	var rng *rand.Rand
	if p.temperature > 0 {
		s := p.noSeed
		if p.seed != nil {
			s = uint64(*p.seed)
		}
		rng = rand.New(rand.NewPCG(s, h))
	}
	var nonces []string
	seen := map[string]bool{}
	var ctx []string // the context without placeholders
	for _, w := range context {
		if w == placeholderWord {
			continue
		}
		ctx = append(ctx, w)
		if isNonce(w) {
			if n := trimNonce(w); !seen[n] {
				seen[n] = true
				nonces = append(nonces, n)
			}
		}
	}

	if p.codesLastFirst {
		slices.Reverse(nonces)
	}
	var out []genToken
	cands := make([]candidate, 0, len(vocabulary)+4)
	next := 0 // context position after the last quoted word
	for step := 0; step < p.maxTokens; step++ {
		cands = cands[:0]
		free := step - len(nonces) // steps since the nonces were echoed
		if free < 0 {
			// A logit far above the rest: nonces are echoed even when
			// sampling at temperature 2.
			cands = append(cands, candidate{word: nonces[step], logit: 30, pos: -1})
		} else {
			cands = append(cands, candidate{eos: true, logit: float64(free-14)*0.5 + unit(mix(h, uint64(step), 1)), pos: -1})
		}
		if len(ctx) > 0 {
			at := next % len(ctx)
			cands = append(cands, candidate{word: ctx[at], pos: at, logit: 2.2 + unit(mix(h, uint64(step), 2))})
			jump := int(mix(h, uint64(step), 3) % uint64(len(ctx)))
			if jump != at {
				cands = append(cands, candidate{word: ctx[jump], pos: jump, logit: 1.6 + unit(mix(h, uint64(step), 4))})
			}
		}
		for i, w := range vocabulary {
			cands = append(cands, candidate{word: w, pos: -1, logit: 2.4 * unit(mix(h, uint64(step), 5, uint64(i)))})
		}
		if variant > 0 {
			for i := range cands {
				c := &cands[i]
				c.logit += variantEps * (2*unit(mix(uint64(variant), h, uint64(step), strHash(c.word), boolU(c.eos))) - 1)
			}
		}
		lse := logSumExp(cands)
		pick := choose(cands, p.temperature, rng)
		c := cands[pick]
		if c.eos {
			return out, "stop"
		}
		if c.pos >= 0 {
			next = c.pos + 1
		}
		tok := genToken{text: spaced(c.word, len(out)), logprob: c.logit - lse}
		if p.topLogprobs > 0 {
			tok.top = topAlts(cands, lse, p.topLogprobs, len(out))
		}
		out = append(out, tok)
	}
	return out, "length"
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func spaced(w string, i int) string {
	if i == 0 {
		return w
	}
	return " " + w
}

func logSumExp(cs []candidate) float64 {
	m := math.Inf(-1)
	for _, c := range cs {
		m = max(m, c.logit)
	}
	var s float64
	for _, c := range cs {
		s += math.Exp(c.logit - m)
	}
	return m + math.Log(s)
}

// choose picks the argmax at temperature 0 (first on ties), else samples
// from softmax(logit/temperature).
func choose(cs []candidate, temperature float64, rng *rand.Rand) int {
	if temperature <= 0 || rng == nil {
		best := 0
		for i, c := range cs {
			if c.logit > cs[best].logit {
				best = i
			}
		}
		return best
	}
	m := math.Inf(-1)
	for _, c := range cs {
		m = max(m, c.logit/temperature)
	}
	var total float64
	ws := make([]float64, len(cs))
	for i, c := range cs {
		ws[i] = math.Exp(c.logit/temperature - m)
		total += ws[i]
	}
	r := rng.Float64() * total
	for i, w := range ws {
		r -= w
		if r < 0 {
			return i
		}
	}
	return len(cs) - 1
}

// topAlts returns the k most likely candidates (end-of-text excluded, as
// it has no text), merged by word.
func topAlts(cs []candidate, lse float64, k, i int) []genAlt {
	best := map[string]float64{}
	for _, c := range cs {
		if c.eos {
			continue
		}
		lp := c.logit - lse
		if old, ok := best[c.word]; !ok || lp > old {
			best[c.word] = lp
		}
	}
	alts := make([]genAlt, 0, len(best))
	for w, lp := range best {
		alts = append(alts, genAlt{text: spaced(w, i), logprob: lp})
	}
	sort.Slice(alts, func(a, b int) bool {
		if alts[a].logprob != alts[b].logprob {
			return alts[a].logprob > alts[b].logprob
		}
		return alts[a].text < alts[b].text
	})
	return alts[:min(k, len(alts))]
}
