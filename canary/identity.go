package canary

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/custody-gateway/custody/tokenize"
)

// IdentityConfig tunes the identity probe. Zero fields take defaults.
type IdentityConfig struct {
	// Prompts is the number of fixed prompts; 0 means 5.
	Prompts int
	// EnrollSamples is the samples per prompt at enrollment; 0 means 6.
	EnrollSamples int
	// Samples is the samples per prompt on each run; 0 means 4.
	Samples int
	// MaxTokens per answer; 0 means 24.
	MaxTokens int
	// Temperature of every sample; 0 (greedy) by default. With a
	// temperature above 0 and no Seed the samples are fresh draws.
	Temperature float64
	// Seed, when set, is sent with every sample.
	Seed *int
	// TopLogprobs asked for per token; 0 means 5, negative means do not
	// ask for logprobs at all (upstreams that refuse them).
	TopLogprobs int
	// Alpha is the false-alarm rate of one run's test; 0 means 0.001.
	Alpha float64
	// Permutations of the permutation test; 0 means 9999 (p resolves to
	// 1e-4, well below Alpha).
	Permutations int
	// LogprobScale is the logprob difference that counts as much as a
	// differing token; 0 means 0.05.
	LogprobScale float64
	// NoiseFloor is the smallest logprob difference that counts: smaller
	// ones are serving noise (batch and cache state) and count as equal.
	// A prompt whose enrollment samples differed by more gets the 90th
	// percentile of their differences instead, up to 5e-3 (see
	// noiseFloors). 0 means 1e-3; negative means none.
	NoiseFloor float64
	// EnrollConcurrency: the second half of the enrollment samples is taken
	// this many requests at a time, so that the reference holds the batch
	// states of a loaded upstream as well as an idle one's; 0 means 4.
	EnrollConcurrency int
	// Retries of a sample whose request the upstream failed (an error, a
	// timeout, a 5xx or 429); 0 means 2, negative means none. Each waits
	// RetryBackoff (0: 250ms) times 2^retry. Still failing, the probe is
	// inconclusive, not failed.
	Retries      int
	RetryBackoff time.Duration
}

func (c IdentityConfig) withDefaults() IdentityConfig {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Prompts, 5)
	def(&c.EnrollSamples, 6)
	def(&c.Samples, 4)
	def(&c.MaxTokens, 24)
	def(&c.TopLogprobs, 5)
	def(&c.Permutations, 9999)
	if c.TopLogprobs < 0 {
		c.TopLogprobs = -1
	}
	if c.Alpha == 0 {
		c.Alpha = 0.001
	}
	if c.LogprobScale == 0 {
		c.LogprobScale = 0.05
	}
	switch {
	case c.NoiseFloor == 0:
		c.NoiseFloor = 1e-3
	case c.NoiseFloor < 0:
		c.NoiseFloor = 0
	}
	def(&c.EnrollConcurrency, 4)
	switch {
	case c.Retries == 0:
		c.Retries = 2
	case c.Retries < 0:
		c.Retries = 0
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = 250 * time.Millisecond
	}
	return c
}

// promptWords make the identity prompts: plain words, nothing nonce-like.
var promptWords = strings.Fields(`describe explain compare weather garden river mountain
	city winter summer music painting history science bridge harbor forest library
	market journey ocean island village kitchen recipe story letter morning evening
	window castle lantern meadow orchard valley canyon desert glacier thunder`)

// identityPrompts regenerates the fixed prompts of an enrollment.
func identityPrompts(seed uint64, n int) []string {
	out := make([]string, n)
	for i := range out {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		w := make([]string, 10+rng.IntN(8))
		for j := range w {
			w[j] = promptWords[rng.IntN(len(promptWords))]
		}
		out[i] = "Write a short passage about " + strings.Join(w, " ") + "."
	}
	return out
}

// sampleParams are the fixed settings of an identity sample.
type sampleParams struct {
	seed        uint64
	prompts     int
	maxTokens   int
	temperature float64
	fixedSeed   *int
	topLogprobs int // -1: no logprobs
}

func (e *Enrollment) params() sampleParams {
	top := e.TopLogprobs
	if !e.Logprobs {
		top = -1
	}
	return sampleParams{seed: e.PromptSeed, prompts: len(e.Samples), maxTokens: e.MaxTokens, temperature: e.Temperature, fixedSeed: e.Seed, topLogprobs: top}
}

func tokenHash(tok string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(tok))
	return h.Sum64()
}

// collect takes n samples of every prompt from t, par requests at a time.
// It returns them with the model (and fingerprint) the route reported: the
// first that differs from want if any does, else the first. Or it returns
// the result of the request that got no answer: failed, or inconclusive
// when the upstream still failed it after retries (see transient).
func collect(ctx context.Context, t Target, sp sampleParams, n int, want string, par int, retry retryPolicy) ([][]Sample, string, string, *ProbeResult) {
	prompts := identityPrompts(sp.seed, sp.prompts)
	out := make([][]Sample, len(prompts))
	var (
		mu        sync.Mutex
		model, fp string
		failed    *ProbeResult
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(par, 1) {
		wg.Go(func() {
			for p := range jobs {
				temp := sp.temperature
				req := ChatRequest{
					Messages:    []Message{{Role: "user", Content: prompts[p]}},
					Temperature: &temp,
					Seed:        sp.fixedSeed,
					MaxTokens:   sp.maxTokens,
				}
				if sp.topLogprobs >= 0 {
					req.Logprobs, req.TopLogprobs = true, sp.topLogprobs
				}
				a, f := retry.ask(ctx, t, req)
				mu.Lock()
				switch {
				case failed != nil:
				case f != nil:
					failed = f
					cancel()
				default:
					if model == "" || (a.Model != want && model == want) {
						model, fp = a.Model, a.Fingerprint
					}
					out[p] = append(out[p], sampleOf(a))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for p := range prompts {
		for range n {
			select {
			case jobs <- p:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if failed != nil {
		return nil, "", "", failed
	}
	if err := ctx.Err(); err != nil {
		f := inconclusive(ProbeIdentity, "no answer: %s", errText(err))
		return nil, "", "", &f
	}
	return out, model, fp, nil
}

// retryPolicy retries the identity probe's requests that the upstream
// failed.
type retryPolicy struct {
	retries int
	backoff time.Duration
}

// ask is ask with retries of transient failures; one that persists is
// inconclusive.
func (rp retryPolicy) ask(ctx context.Context, t Target, req ChatRequest) (answer, *ProbeResult) {
	for try := 0; ; try++ {
		a, f := ask(ctx, t, ProbeIdentity, req)
		if f == nil || !f.transient {
			return a, f
		}
		if try == rp.retries || ctx.Err() != nil {
			r := inconclusive(ProbeIdentity, "upstream failed %d tries: %s", try+1, f.Evidence)
			r.Code = f.Code
			return answer{}, &r
		}
		wait := time.NewTimer(rp.backoff << try)
		select {
		case <-ctx.Done():
			wait.Stop()
		case <-wait.C:
		}
	}
}

func sampleOf(a answer) Sample {
	var s Sample
	if len(a.Tokens) == 0 {
		for _, w := range a.words() {
			s.T = append(s.T, tokenHash(w))
		}
		return s
	}
	s.T = make([]uint64, len(a.Tokens))
	s.L = make([]float64, len(a.Tokens))
	for i, t := range a.Tokens {
		s.T[i], s.L[i] = tokenHash(t.Token), t.Logprob
		if len(t.Top) > 0 {
			if s.K == nil {
				s.K = make([][]Alt, len(a.Tokens))
			}
			for _, alt := range t.Top {
				s.K[i] = append(s.K[i], Alt{T: tokenHash(alt.Token), L: alt.Logprob})
			}
		}
	}
	return s
}

// identityTest compares fresh samples with the enrolled reference.
// Each prompt's logprob noise floor comes from its reference samples.
func identityTest(ref, cur [][]Sample, cfg IdentityConfig, rng *rand.Rand) (stat, p float64) {
	floors := noiseFloors(ref, cfg.NoiseFloor)
	strata := make([]stratum, 0, len(ref))
	for i := range ref {
		if i < len(cur) && len(cur[i]) > 0 {
			strata = append(strata, newStratum(ref[i], cur[i], cfg.LogprobScale, floors[i]))
		}
	}
	return permutationTest(strata, cfg.Permutations, rng)
}

// enroll samples t under the configured settings into a new enrollment.
func (r *Runner) enroll(ctx context.Context, t Target) (*Enrollment, *ProbeResult) {
	c := r.cfg.Identity
	e := &Enrollment{
		Version:     enrollmentVersion,
		Route:       t.Name(),
		Created:     r.now().UTC(),
		PromptSeed:  rand.Uint64(),
		MaxTokens:   c.MaxTokens,
		Temperature: c.Temperature,
		Seed:        c.Seed,
		Logprobs:    c.TopLogprobs >= 0,
		TopLogprobs: max(c.TopLogprobs, 0),
	}
	sp := e.params()
	sp.prompts = c.Prompts
	// Half the samples one at a time (an idle upstream's batch state), half
	// EnrollConcurrency at a time (a loaded one's): the noise floors and the
	// permutation test then know both.
	idle := (c.EnrollSamples + 1) / 2
	samples, model, fp, f := collect(ctx, t, sp, idle, "", 1, r.retry())
	if f != nil {
		return nil, f
	}
	loaded, model2, fp2, f := collect(ctx, t, sp, c.EnrollSamples-idle, model, c.EnrollConcurrency, r.retry())
	if f != nil {
		return nil, f
	}
	if model2 != model {
		model, fp = model2, fp2 // the route changed model during enrollment: keep the odd one, so the next run fails
	}
	for p := range samples {
		samples[p] = append(samples[p], loaded[p]...)
	}
	e.Samples, e.Model, e.Fingerprint = samples, model, fp
	return e, nil
}

func (r *Runner) retry() retryPolicy {
	return retryPolicy{retries: r.cfg.Identity.Retries, backoff: r.cfg.Identity.RetryBackoff}
}

// identityTokens is a generous count of an identity request: the longest
// prompt identityPrompts makes plus the answer.
func identityTokens(c tokenize.Counter, maxTokens int) int {
	long := "Write a short passage about " + strings.Repeat("description ", 18) + "."
	return tokenize.Chat(c, []tokenize.Message{{Role: "user", Content: long}}) + maxTokens
}

// probeIdentity tests the route against its enrollment, enrolling it on
// its first run.
func (r *Runner) probeIdentity(ctx context.Context, rt *route) ProbeResult {
	e, loadErr := rt.enrollment(r.cfg.Dir)
	if loadErr != nil {
		return fail(ProbeIdentity, "enrollment unreadable, re-enroll to reset: %s", errText(loadErr))
	}
	if e == nil {
		e, f := r.enroll(ctx, rt.t)
		if f != nil {
			f.Evidence = "enrolling: " + f.Evidence
			return *f
		}
		if err := r.storeEnrollment(rt, e); err != nil {
			return fail(ProbeIdentity, "enrolled but not saved: %s", errText(err))
		}
		r.emit(Event{Kind: EventEnrolled, Model: rt.model, Route: rt.index, Name: rt.t.Name(),
			Detail: fmt.Sprintf("%d prompts x %d samples, model %s", len(e.Samples), r.cfg.Identity.EnrollSamples, e.Model)})
		return pass(ProbeIdentity, "enrolled %d prompts x %d samples (model %s)", len(e.Samples), r.cfg.Identity.EnrollSamples, e.Model)
	}
	cur, model, _, f := collect(ctx, rt.t, e.params(), r.cfg.Identity.Samples, e.Model, 1, r.retry())
	if f != nil {
		return *f
	}
	stat, p := identityTest(e.Samples, cur, r.cfg.Identity, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
	alpha := r.cfg.Identity.Alpha
	shape := fmt.Sprintf("%d prompts x %d/%d samples", len(e.Samples), len(e.Samples[0]), r.cfg.Identity.Samples)
	switch {
	case model != e.Model:
		return fail(ProbeIdentity, "model %s, enrolled %s; p=%.4f, E=%.4f over %s", model, e.Model, p, stat, shape)
	case p <= alpha:
		return fail(ProbeIdentity, "answers differ from enrollment: p=%.4f <= alpha=%g, E=%.4f over %s", p, alpha, stat, shape)
	}
	return pass(ProbeIdentity, "p=%.4f > alpha=%g, E=%.4f over %s", p, alpha, stat, shape)
}
