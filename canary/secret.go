package canary

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// secretRing is the bounded set of live canary secrets: each is registered
// with the contamination matcher before its request is sent and removed
// when MaxSecrets newer ones have been planted.
type secretRing struct {
	add    func(secret, label string)
	remove func(secret string)
	max    int

	mu   sync.Mutex
	live []liveSecret // oldest first; guarded by mu
	seq  uint64       // guarded by mu
}

type liveSecret struct{ secret, label string }

// plant makes a new secret for route, registers it and evicts the oldest
// beyond the bound.
func (s *secretRing) plant(route string) (secret, label string) {
	secret = nonce(24)
	s.mu.Lock()
	s.seq++
	label = fmt.Sprintf("canary:%s#%d", route, s.seq)
	s.live = append(s.live, liveSecret{secret, label})
	var evicted []liveSecret
	if over := len(s.live) - s.max; over > 0 {
		evicted = append(evicted, s.live[:over]...)
		s.live = append(s.live[:0:0], s.live[over:]...)
	}
	s.mu.Unlock()
	if s.add != nil {
		s.add(secret, label)
	}
	for _, e := range evicted {
		if s.remove != nil {
			s.remove(e.secret)
		}
	}
	return secret, label
}

// find returns the label of a live secret that text carries.
func (s *secretRing) find(text string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.live {
		if strings.Contains(text, e.secret) {
			return e.label, true
		}
	}
	return "", false
}

func (s *secretRing) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// probeSecret sends a unique secret as the synthetic canary tenant. The
// probe passes when its own request is served; its worth is elsewhere:
// once registered, the secret in any live response (another tenant's
// answer decoded from this request's stale KV pages) is caught by custody's
// contamination check, and by the echo probe.
func (r *Runner) probeSecret(ctx context.Context, t Target) ProbeResult {
	secret, label := r.secrets.plant(t.Name())
	_, f := ask(ctx, t, ProbeSecret, ChatRequest{
		Messages:    []Message{{Role: "user", Content: "Keep this reference number on file: " + secret}},
		Temperature: zero(),
		MaxTokens:   16,
		Tenant:      r.cfg.SecretTenant,
	})
	if f != nil {
		return *f
	}
	return pass(ProbeSecret, "secret %s served; %d live", label, r.secrets.len())
}
