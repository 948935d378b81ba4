package contamination

import "time"

// Config tunes a Detector. Every zero value means the documented default;
// the defaults are the ones measured in corpus_test.go (0 or 1 false alarm
// over 36,000 clean exchanges; about 82% of 8-word and 97% of 12-word leaks
// caught).
type Config struct {
	// K is the k-gram length in words. Zero means 4.
	K int
	// Window is the winnowing window, in k-grams: of every Window
	// consecutive k-grams of a prompt at least one is kept. Zero means 2.
	// With K=4, Window=2 and MinRun=3, any 9 consecutive words copied from
	// another prompt (6 k-grams) carry at least 3 of its fingerprints
	// (fewer if some of them are popular or common phrases).
	Window int
	// MinRun is how many distinct fingerprints of one other request a
	// response must carry in a run (misses between them at most
	// 2*Window+K-2, so that one inserted word does not break it) to be
	// contaminated. Zero means 3. A nonce-like word of another prompt (see
	// isNonceHash) is a finding alone.
	MinRun int
	// MinWords is how many words of the response the run must cover, from
	// its first fingerprint's first word to its last one's last word: a few
	// common words that happen to meet a stock phrase make a short dense
	// run, a copied sentence a long one. Zero means K+MinRun (7).
	MinWords int
	// MaxPrompts is how many prompts are remembered; the oldest is forgotten
	// first. Zero means 4096.
	MaxPrompts int
	// MaxSharedBy: a fingerprint remembered for more than MaxSharedBy
	// requests is popular (boilerplate) and is ignored. Zero means 16; the
	// largest allowed is 64.
	MaxSharedBy int
	// TTL is how long a prompt is remembered. Zero means 10 minutes.
	TTL time.Duration
	// MaxPrintsPerPrompt caps the fingerprints kept for one prompt. A longer
	// prompt keeps evenly spaced contiguous blocks of its fingerprints, so a
	// leak from it is caught with probability about the kept fraction.
	// Zero means 16384 (about 24,000 words of prompt).
	MaxPrintsPerPrompt int
	// MaxPrints caps the fingerprints remembered in all; the oldest prompts
	// are forgotten to make room. Zero means 1<<20 (see Detector for bytes).
	MaxPrints int
	// CommonAfter: a k-gram that earlier responses carried (outside their
	// own prompts) at least CommonAfter times is a generic phrase of the
	// model and is ignored, like a popular fingerprint. Zero means 1; a
	// negative value turns this off. Only responses served unflagged
	// teach (Scanner.Close after a clean scan; a contaminated response
	// teaches nothing, so the same leak retried is caught every time), and
	// a tenant's own answers alone never make a phrase generic to that
	// tenant (see common). (1 rather
	// than 3 since there is no warm-up: a stock phrase of the model that a
	// chat history held before any response said it is then a false alarm
	// once, not three times.)
	CommonAfter int
	// NoStockPhrases turns off the built-in stock phrases (see stock.go):
	// the common 4-grams of English and the phrases models, templates and
	// code say to everyone, neutral from the first response on. They are
	// what lets a freshly started Detector report fingerprint findings at
	// once. (Only K=4 uses all of them; other K use what fits.)
	NoStockPhrases bool
	// Warmup is how many responses the Detector learns from (see
	// CommonAfter) before it reports fingerprint findings. Zero or
	// negative means none, the default: the stock phrases make a warm-up
	// unnecessary, and a warm-up is a window in which a stale-KV leak right
	// after a start goes unreported. Secrets are reported from the first
	// response in any case.
	Warmup int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

const maxSharedByLimit = 64

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.K, 4)
	def(&c.Window, 2)
	def(&c.MinRun, 3)
	def(&c.MinWords, c.K+c.MinRun)
	def(&c.MaxPrompts, 4096)
	def(&c.MaxSharedBy, 16)
	def(&c.MaxPrintsPerPrompt, 16384)
	def(&c.MaxPrints, 1<<20)
	if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.CommonAfter == 0 {
		c.CommonAfter = 1
	}
	if c.MaxSharedBy > maxSharedByLimit {
		c.MaxSharedBy = maxSharedByLimit
	}
	if c.TTL <= 0 {
		c.TTL = 10 * time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
