package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/canary"
)

// noCapacity is a route with no known capacity and no upstream.
type noCapacity struct{}

func (noCapacity) Name() string  { return "m/p" }
func (noCapacity) Capacity() int { return 0 }
func (noCapacity) Chat(context.Context, canary.ChatRequest) (canary.Result, error) {
	return canary.Result{}, errors.New("no upstream")
}
func (noCapacity) Direct(context.Context, canary.ChatRequest) (canary.Result, error) {
	return canary.Result{}, errors.New("no upstream")
}

// TestRouteHealthSkipped: the console shows a skipped probe as not
// failing, and says it was skipped; a failed one as failing.
func TestRouteHealthSkipped(t *testing.T) {
	r, err := canary.New(t.Context(), canary.Config{Routes: []canary.Route{{Model: "m", Target: noCapacity{}}},
		Probes: []string{canary.ProbeEcho, canary.ProbeOversize}})
	if err != nil {
		t.Fatal(err)
	}
	r.RunOnce(t.Context())
	got := map[string]bool{}
	for _, h := range routeHealth(r) {
		got[h.Probe] = h.OK
		if h.Probe == canary.ProbeOversize && !strings.HasPrefix(h.Detail, "skipped: ") {
			t.Errorf("oversize detail %q", h.Detail)
		}
	}
	if !got[canary.ProbeOversize] || got[canary.ProbeEcho] {
		t.Errorf("console health %v: want oversize (skipped) not failing, echo failing", got)
	}
}
