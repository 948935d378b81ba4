package sim

import (
	"slices"
	"testing"
)

// TestSampleSeedRepeatsFreshSamples: with Config.SampleSeed, unseeded
// sampling is fresh from one request to the next but the same stream on
// every server with that seed; without it, a server samples at random.
func TestSampleSeedRepeatsFreshSamples(t *testing.T) {
	body := []byte(`{"model":"sim-1","messages":[{"role":"user","content":"tell me a story about seeds"}],"temperature":1,"max_tokens":24}`)
	answers := func(cfg Config) []string {
		ts := newTestServer(t, cfg)
		var out []string
		for range 4 {
			r := post(t, ts, "/v1/chat/completions", body)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			out = append(out, r.resp.Choices[0].Message.Content)
		}
		return out
	}
	a, b := answers(Config{SampleSeed: 5}), answers(Config{SampleSeed: 5})
	if !slices.Equal(a, b) {
		t.Errorf("one SampleSeed, two streams:\n%q\n%q", a, b)
	}
	if slices.Equal(a[:1], a[1:2]) && slices.Equal(a[1:2], a[2:3]) && slices.Equal(a[2:3], a[3:]) {
		t.Errorf("SampleSeed repeats one sample: %q", a)
	}
	if c := answers(Config{SampleSeed: 6}); slices.Equal(a, c) {
		t.Errorf("two SampleSeeds, one stream: %q", a)
	}
}
