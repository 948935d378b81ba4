package canary

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/custody-gateway/custody/sim"
)

// servingNoise imitates what batch and cache state do to a real engine's
// logprobs at temperature 0, which the simulator (deterministic) does not:
// while other requests are in flight (a batch), every logprob of an answer
// moves by N(0, sd) with sd drawn per request from [1e-4, 1e-3]; the first
// answer to a prompt (a prefix-cache miss) moves by a fixed ±2e-4. An idle,
// warm upstream answers exactly alike.
type servingNoise struct {
	base     atomic.Pointer[simTarget] // swappable: honest or variant
	inflight atomic.Int64
	most     atomic.Int64 // the most requests in flight at once
	mu       sync.Mutex
	rng      *rand.Rand
	seen     map[string]bool // prompts answered once: cached
}

func newServingNoise(base *simTarget, seed uint64) *servingNoise {
	n := &servingNoise{rng: rand.New(rand.NewPCG(seed, 7)), seen: map[string]bool{}}
	n.base.Store(base)
	return n
}

func (n *servingNoise) Name() string  { return n.base.Load().Name() }
func (n *servingNoise) Capacity() int { return n.base.Load().Capacity() }
func (n *servingNoise) Direct(ctx context.Context, req ChatRequest) (Result, error) {
	return n.base.Load().Direct(ctx, req)
}

func (n *servingNoise) Chat(ctx context.Context, req ChatRequest) (Result, error) {
	now := n.inflight.Add(1)
	for m := n.most.Load(); now > m && !n.most.CompareAndSwap(m, now); m = n.most.Load() {
	}
	batch := now > 1
	defer n.inflight.Add(-1)
	res, err := n.base.Load().Chat(ctx, req)
	if err != nil || res.Status != 200 || len(req.Messages) == 0 {
		return res, err
	}
	batch = batch || n.inflight.Load() > 1
	n.mu.Lock()
	key := req.Messages[0].Content
	miss := !n.seen[key]
	n.seen[key] = true
	sd := 0.0
	if batch {
		sd = 1e-4 + n.rng.Float64()*9e-4
	}
	offset := 0.0
	if miss {
		offset = 2e-4
		if n.rng.IntN(2) == 0 {
			offset = -2e-4
		}
	}
	jitter := func() float64 { return offset + n.rng.NormFloat64()*sd }
	n.mu.Unlock()
	if sd == 0 && offset == 0 {
		return res, nil
	}
	var body map[string]any
	if json.Unmarshal(res.Body, &body) != nil {
		return res, nil
	}
	n.mu.Lock()
	for _, c := range list(body["choices"]) {
		lp, _ := obj(c)["logprobs"].(map[string]any)
		for _, tok := range list(lp["content"]) {
			perturb(obj(tok), jitter)
			for _, alt := range list(obj(tok)["top_logprobs"]) {
				perturb(obj(alt), jitter)
			}
		}
	}
	n.mu.Unlock()
	res.Body, _ = json.Marshal(body)
	return res, nil
}

func list(v any) []any         { l, _ := v.([]any); return l }
func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func perturb(m map[string]any, jitter func() float64) {
	if l, ok := m["logprob"].(float64); ok {
		m["logprob"] = min(l+jitter(), 0)
	}
}

// traffic keeps k requests of other clients in flight on tg until stop is
// closed: the concurrent load the probe shares the batch with.
func traffic(ctx context.Context, tg Target, k int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			temp := 0.7
			for j := 0; ctx.Err() == nil; j++ {
				tg.Chat(ctx, ChatRequest{Messages: []Message{{Role: "user", Content: "Tell me about harbors and winter " + string(rune('a'+(i+j)%26))}},
					Temperature: &temp, MaxTokens: 16, Logprobs: true, TopLogprobs: 5})
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// TestIdentityAfterConcurrentTraffic is the false alarm of the issue: an
// enrollment taken, then identity probes while other traffic fills the
// batch. With the noise floor and the enrollment partly under load, the
// honest route passes; the close variant (what model-lie serves) under the
// same noise still fails. (The 9-in-11 false alarms came from logprob
// differences of 1e-4 counting as evidence.)
func TestIdentityAfterConcurrentTraffic(t *testing.T) {
	runs, variantRuns := 12, 6
	if testing.Short() {
		runs, variantRuns = 6, 3
	}
	honestSim := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity}), testCapacity)
	variantSim := newTarget(t, newSim(t, sim.Config{Capacity: testCapacity, Variant: 1}), testCapacity)
	tg := newServingNoise(honestSim, 1)
	r := newRunner(t, Config{Routes: []Route{{Model: "sim-1", Target: tg}}, Probes: []string{ProbeIdentity}, FailRuns: 100})
	if res := resultOf(r.RunOnce(t.Context())[0], ProbeIdentity); res.Status != StatusOK {
		t.Fatalf("enrollment: %+v", res)
	}
	stop := traffic(t.Context(), tg, 2)
	defer stop()
	alarms := 0
	for i := range runs {
		res := resultOf(r.RunOnce(t.Context())[0], ProbeIdentity)
		if res.Status != StatusOK {
			alarms++
			t.Logf("run %d: %s %s", i, res.Status, res.Evidence)
		}
	}
	tg.base.Store(variantSim)
	caught := 0
	for range variantRuns {
		if res := resultOf(r.RunOnce(t.Context())[0], ProbeIdentity); res.Status == StatusFailed {
			caught++
		}
	}
	t.Logf("honest after concurrent traffic: %d false alarms in %d runs; variant caught %d of %d", alarms, runs, caught, variantRuns)
	if alarms > 0 {
		t.Errorf("%d false alarms in %d runs", alarms, runs)
	}
	if caught < variantRuns-1 {
		t.Errorf("variant caught %d of %d", caught, variantRuns)
	}
}
