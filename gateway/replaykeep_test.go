package gateway

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

// TestReplayKeptAcrossReload: a gateway built with the previous one's
// replay memory (a reload of the same replay settings) still knows the
// responses delivered before it; one whose replay window changed starts
// a new memory.
func TestReplayKeptAcrossReload(t *testing.T) {
	build := func(yaml string, prev *Gateway) *Gateway {
		t.Helper()
		cfg, err := config.Parse("t.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Config: cfg, Recorder: &memRecorder{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if prev != nil {
			o.Replay = prev.Replay()
		}
		g, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	const base = "tenants: [{id: a, anonymous_loopback: true}]\n"
	now := time.Now()
	first := build(base, nil)
	if err := first.Replay().Claim("id\x00sim\x00chatcmpl-1", custody.NewID(now), now); err != nil {
		t.Fatal(err)
	}
	reloaded := build(base, first)
	err := reloaded.Replay().Claim("id\x00sim\x00chatcmpl-1", custody.NewID(now), now)
	if custody.CodeOf(err) != custody.CodeResponseReplayed {
		t.Fatalf("after a reload, a response delivered before it again: %v, want %s", err, custody.CodeResponseReplayed)
	}
	changed := build(base+"checks: {replay_window: 1m}\n", reloaded)
	if changed.Replay() == reloaded.Replay() || changed.Replay().Len() != 0 {
		t.Fatalf("a reload that changed the replay window kept the old memory")
	}
}
