package gateway

import (
	"strings"
	"sync"

	"github.com/custody-gateway/custody/index"
)

// pathTracker remembers the (provider, response model, fingerprint)
// tuples seen for each model, so that the first sight of a new one (an
// alias that moved, a new serving build behind the same name) becomes a
// path_change event. It is seeded at start from the index's past events.
type pathTracker struct {
	mu   sync.Mutex
	seen map[string]struct{} // guarded by mu
	max  int
}

func newPathTracker(max int) *pathTracker {
	return &pathTracker{seen: map[string]struct{}{}, max: max}
}

func pathKey(model, provider, responseModel, fingerprint string) string {
	return model + "\x00" + provider + "\x00" + responseModel + "\x00" + fingerprint
}

// observe reports whether the tuple is new, and remembers it. When the
// memory is full, new tuples are still reported but no longer
// remembered: a flood of fingerprints stays loud rather than silent.
func (p *pathTracker) observe(model, provider, responseModel, fingerprint string) bool {
	k := pathKey(model, provider, responseModel, fingerprint)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.seen[k]; ok {
		return false
	}
	if len(p.seen) < p.max {
		p.seen[k] = struct{}{}
	}
	return true
}

// Seed marks a tuple as already seen (from a past path_change event).
func (p *pathTracker) seed(model, provider, responseModel, fingerprint string) {
	p.observe(model, provider, responseModel, fingerprint)
}

// ParsePath reads a path back from a path_change event (whose detail the
// recorder writes as provider|response model|fingerprint).
func ParsePath(e index.Event) (Path, bool) {
	parts := strings.SplitN(e.Detail, "|", 3)
	if e.Type != index.EventPathChange || len(parts) != 3 {
		return Path{}, false
	}
	return Path{Model: e.Model, Provider: parts[0], ResponseModel: parts[1], Fingerprint: parts[2]}, true
}
