package canary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/custody-gateway/custody/sim"
)

// identitySetting is one way of running the identity test, measured below.
type identitySetting struct {
	name  string
	cfg   IdentityConfig
	noise float64 // serving noise: logprob jitter sd; a sample diverges with prob 10*noise
	// batch: batch-state noise after concurrent traffic (see addBatchNoise):
	// every fresh sample and the second half of the reference (the part
	// enrolled under load), or with idleRef none of the reference (an
	// enrollment taken on an idle upstream, as before enrollments were
	// taken partly under load).
	batch, idleRef bool
	// maxFAR and minPower bound what the test must show over the runs.
	maxFAR, minPower float64
}

// TestIdentityFalseAlarmAndPower measures the identity test on the
// simulator: the false-alarm rate (honest enrollment vs fresh honest
// sample, new prompts every run) and the power against Variant 1 (what
// model-lie serves), at the configured alpha. The figures are in
// docs/canaries.md; `go test -run IdentityFalseAlarm -v` prints them.
func TestIdentityFalseAlarmAndPower(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement: thousands of requests")
	}
	// 200 runs per setting for the figures in docs/canaries.md
	// (CUSTODY_MEASURE=1, about 3 minutes); 40 in CI. The simulator is
	// deterministic and the seeds fixed, so CI's runs are the first 40
	// of the 200.
	runs := 40
	if os.Getenv("CUSTODY_MEASURE") != "" {
		runs = 200
	}
	// SampleSeed: the T=1 settings' fresh samples repeat too; one stream
	// a simulator, so no two of them sample alike.
	honest := &simTarget{name: "honest", base: newSim(t, sim.Config{SampleSeed: 7}), model: "sim-1"}
	variant := &simTarget{name: "variant", base: newSim(t, sim.Config{Variant: 1, SampleSeed: 8}), model: "sim-1"}
	drift := &simTarget{name: "drift", base: newSim(t, sim.Config{Variant: 2, SampleSeed: 9}), model: "sim-1"}
	// The bounds allow for binomial noise: at alpha 0.001 and 200 runs the
	// false alarms are Binomial(200, <=0.001), P(> 3) < 0.0001.
	for _, s := range []identitySetting{
		{name: "default: greedy, top-5 logprobs", maxFAR: 0.015, minPower: 0.95},
		{name: "default + serving noise", noise: 0.01, maxFAR: 0.015, minPower: 0.95},
		{name: "default + batch-state noise", batch: true, maxFAR: 0.015, minPower: 0.95},
		{name: "batch noise, idle enrollment", batch: true, idleRef: true, maxFAR: 0.015, minPower: 0.95},
		{name: "batch noise, idle enrollment, no floor", cfg: IdentityConfig{NoiseFloor: -1}, batch: true, idleRef: true, maxFAR: 1},
		{name: "T=1 fresh samples, logprobs", cfg: IdentityConfig{Temperature: 1}, maxFAR: 0.015},
		{name: "greedy, no logprobs", cfg: IdentityConfig{TopLogprobs: -1}, maxFAR: 0.015},
		{name: "greedy, no logprobs, 10 prompts", cfg: IdentityConfig{TopLogprobs: -1, Prompts: 10}, maxFAR: 0.015},
	} {
		t.Run(s.name, func(t *testing.T) {
			cfg := s.cfg.withDefaults()
			rng := rand.New(rand.NewPCG(7, uint64(len(s.name))))
			alphas := []float64{0.001, 0.01, 0.05, 0.10}
			var fa, v1, v2 [4]int
			count := func(into *[4]int, p float64) {
				for j, a := range alphas {
					if p <= a {
						into[j]++
					}
				}
			}
			for range runs {
				sp := sampleParams{seed: rng.Uint64(), prompts: cfg.Prompts, maxTokens: cfg.MaxTokens, temperature: cfg.Temperature, topLogprobs: cfg.TopLogprobs}
				ref := mustCollect(t, honest, sp, cfg.EnrollSamples)
				h := mustCollect(t, honest, sp, cfg.Samples)
				v := mustCollect(t, variant, sp, cfg.Samples)
				d := mustCollect(t, drift, sp, cfg.Samples)
				if s.noise > 0 {
					for _, set := range [][][]Sample{ref, h, v, d} {
						addNoise(set, s.noise, rng)
					}
				}
				if s.batch {
					if !s.idleRef {
						addBatchNoise(ref, cfg.EnrollSamples-(cfg.EnrollSamples+1)/2, rng)
					}
					for _, set := range [][][]Sample{h, v, d} {
						addBatchNoise(set, cfg.Samples, rng)
					}
				}
				_, p := identityTest(ref, h, cfg, rng)
				count(&fa, p)
				_, p = identityTest(ref, v, cfg, rng)
				count(&v1, p)
				_, p = identityTest(ref, d, cfg, rng)
				count(&v2, p)
			}
			t.Logf("%-32s runs=%d false alarms at alpha .001/.01/.05/.10: %d/%d/%d/%d", s.name, runs, fa[0], fa[1], fa[2], fa[3])
			t.Logf("%-32s power at alpha .001: Variant 1 %d %s, Variant 2 %d; at .01: Variant 1 %d %s, Variant 2 %d",
				s.name, v1[0], ci(wilson(v1[0], runs)), v2[0], v1[1], ci(wilson(v1[1], runs)), v2[1])
			far, power := float64(fa[0])/float64(runs), float64(v1[0])/float64(runs)
			if cfg.Alpha != alphas[0] {
				t.Fatalf("the default alpha is %v, not %v", cfg.Alpha, alphas[0])
			}
			if far > s.maxFAR {
				t.Errorf("false-alarm rate %.3f > %.3f", far, s.maxFAR)
			}
			if power < s.minPower {
				t.Errorf("power %.3f < %.3f", power, s.minPower)
			}
		})
	}
}

func mustCollect(t *testing.T, tg Target, sp sampleParams, n int) [][]Sample {
	t.Helper()
	s, _, _, f := collect(t.Context(), tg, sp, n, "", 1, retryPolicy{})
	if f != nil {
		t.Fatal(f.Evidence)
	}
	return s
}

// addNoise imitates a real serving stack's nondeterminism at temperature
// 0 (batch-dependent kernels): every logprob jitters by N(0, sd), and with
// probability 10×sd a sample diverges at a random position, every token
// after which is different.
func addNoise(set [][]Sample, sd float64, rng *rand.Rand) {
	for _, ss := range set {
		for i := range ss {
			s := &ss[i]
			for j := range s.L {
				s.L[j] = min(s.L[j]+rng.NormFloat64()*sd, 0)
				if s.K == nil {
					continue
				}
				for k := range s.K[j] {
					s.K[j][k].L = min(s.K[j][k].L+rng.NormFloat64()*sd, 0)
				}
			}
			if len(s.T) > 0 && rng.Float64() < 10*sd {
				for j := rng.IntN(len(s.T)); j < len(s.T); j++ {
					s.T[j] = rng.Uint64()
				}
			}
		}
	}
}

// addBatchNoise imitates the batch state of an upstream under concurrent
// load on the last n samples of every prompt: each sample's logprobs move
// by N(0, sd) with sd drawn from [1e-4, 1e-3] (the kernels' reductions
// change with the batch); the tokens stay (servingNoise in noise_test.go
// does the same on live answers).
func addBatchNoise(set [][]Sample, n int, rng *rand.Rand) {
	for _, ss := range set {
		for i := max(len(ss)-n, 0); i < len(ss); i++ {
			s := &ss[i]
			sd := 1e-4 + rng.Float64()*9e-4
			for j := range s.L {
				s.L[j] = min(s.L[j]+rng.NormFloat64()*sd, 0)
				if len(s.K) > j {
					for k := range s.K[j] {
						s.K[j][k].L = min(s.K[j][k].L+rng.NormFloat64()*sd, 0)
					}
				}
			}
		}
	}
}

// wilson is the 95% Wilson score interval of k successes in n.
func wilson(k, n int) [2]float64 {
	const z = 1.96
	p, nf := float64(k)/float64(n), float64(n)
	c := (p + z*z/(2*nf)) / (1 + z*z/nf)
	h := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return [2]float64{max(c-h, 0), min(c+h, 1)}
}

func ci(w [2]float64) string { return fmt.Sprintf("[%.3f, %.3f]", w[0], w[1]) }
