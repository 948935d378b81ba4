package sim

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const (
	promptA = "The quarterly revenue report for Blue Harbor Logistics mentions account " + nonceA + " and the merger with Northwind."
	promptB = "Summarise the history of the printing press in two sentences."
)

// TestFaults shows, for every fault, the symptom on the wire that its
// custody check keys on. Each case sends a clean request A (whose prompt
// holds nonceA), then request B with the fault in X-Sim-Fault.
func TestFaults(t *testing.T) {
	type env struct {
		a, b  reply
		clean reply // B's prompt on a fresh clean server
	}
	chat := func(p string) any { return chatBody("sim-1", false, p) }
	stream := func(p string) any { return chatBody("sim-1", true, p) }
	cmpl := func(p string) any { return map[string]any{"model": "sim-1", "prompt": p} }
	cases := []struct {
		name  string
		fault Fault
		cfg   Config
		path  string
		body  func(string) any
		check func(t *testing.T, e env)
	}{
		{"placeholder-substitution", FaultPlaceholderSubstitution, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if want := chatTokens(t, "") + 1; e.b.status != 200 || e.b.resp.Usage.PromptTokens != want {
				t.Errorf("status %d, prompt_tokens %d, want 200 and the placeholder's %d", e.b.status, e.b.resp.Usage.PromptTokens, want)
			}
			if !strings.Contains(e.b.resp.text(), nonceA) {
				t.Errorf("answer %q does not carry the earlier request's nonce", e.b.resp.text())
			}
		}},
		{"placeholder-substitution completions", FaultPlaceholderSubstitution, Config{}, "/v1/completions", cmpl, func(t *testing.T, e env) {
			if e.b.resp.Usage.PromptTokens != 1 || !strings.Contains(e.b.resp.text(), nonceA) {
				t.Errorf("prompt_tokens %d, answer %q", e.b.resp.Usage.PromptTokens, e.b.resp.text())
			}
		}},
		{"placeholder-substitution with tags", FaultPlaceholderSubstitution, Config{OwnershipTags: true}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			failedClosed(t, e.b)
		}},
		{"stale-kv", FaultStaleKV, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.resp.Usage.PromptTokens != chatTokens(t, promptB+" "+nonceB) {
				t.Errorf("prompt_tokens %d not honest", e.b.resp.Usage.PromptTokens)
			}
			if txt := e.b.resp.text(); !strings.Contains(txt, nonceA) || !strings.Contains(txt, nonceB) {
				t.Errorf("answer %q should carry both nonces", txt)
			}
		}},
		{"stale-kv stream", FaultStaleKV, Config{}, "/v1/chat/completions", stream, func(t *testing.T, e env) {
			if !strings.Contains(e.b.streamText(), nonceA) {
				t.Errorf("streamed answer %q lacks the earlier nonce", e.b.streamText())
			}
		}},
		{"stale-kv with tags", FaultStaleKV, Config{OwnershipTags: true}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			failedClosed(t, e.b)
		}},
		{"response-swap", FaultResponseSwap, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if !bytes.Equal(e.b.body, e.a.body) {
				t.Errorf("B's body is not A's:\nA %s\nB %s", e.a.body, e.b.body)
			}
		}},
		{"response-swap stream", FaultResponseSwap, Config{}, "/v1/chat/completions", stream, func(t *testing.T, e env) {
			if !bytes.Equal(e.b.body, e.a.body) || !strings.Contains(e.b.streamText(), nonceA) {
				t.Errorf("B's stream is not A's")
			}
		}},
		{"response-swap embeddings", FaultResponseSwap, Config{}, "/v1/embeddings", func(p string) any { return map[string]any{"model": "sim-1", "input": p} }, func(t *testing.T, e env) {
			if !bytes.Equal(e.b.body, e.a.body) {
				t.Error("B's body is not A's")
			}
		}},
		{"silent-fallback", FaultSilentFallback, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.resp.Model != "sim-fallback-1" || e.b.resp.SystemFingerprint == e.clean.resp.SystemFingerprint {
				t.Errorf("model %q fingerprint %q", e.b.resp.Model, e.b.resp.SystemFingerprint)
			}
		}},
		{"silent-fallback stream", FaultSilentFallback, Config{}, "/v1/chat/completions", stream, func(t *testing.T, e env) {
			for _, ev := range e.b.events {
				if ev.Model != "sim-fallback-1" {
					t.Fatalf("chunk model %q", ev.Model)
				}
			}
		}},
		{"model-lie", FaultModelLie, Config{}, "/v1/chat/completions", func(p string) any {
			b := chatBody("sim-1", false, p)
			b["logprobs"] = true
			return b
		}, func(t *testing.T, e env) {
			r, c := e.b.resp, e.clean.resp
			if r.Model != "sim-1" || r.SystemFingerprint != c.SystemFingerprint {
				t.Errorf("model-lie must report the honest name and fingerprint: %q %q", r.Model, r.SystemFingerprint)
			}
			if r.Choices[0].Logprobs.Content[0].Logprob == c.Choices[0].Logprobs.Content[0].Logprob {
				t.Error("the variant's logprobs equal the honest model's")
			}
		}},
		{"snapshot-drift", FaultSnapshotDrift, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.resp.Model != "sim-1-0901" || e.b.resp.SystemFingerprint == e.clean.resp.SystemFingerprint {
				t.Errorf("model %q fingerprint %q", e.b.resp.Model, e.b.resp.SystemFingerprint)
			}
		}},
		{"snapshot-drift pinned", FaultSnapshotDrift, Config{Models: []string{"sim-1-0827"}}, "/v1/chat/completions", func(p string) any { return chatBody("sim-1-0827", false, p) }, func(t *testing.T, e env) {
			if e.b.resp.Model != "sim-1-0901" {
				t.Errorf("model %q, want sim-1-0901", e.b.resp.Model)
			}
		}},
		{"truncate", FaultTruncate, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			honest := chatTokens(t, promptB+" "+nonceB)
			if got := e.b.resp.Usage.PromptTokens; got >= honest || got != e.clean.resp.Usage.PromptTokens-(honest-got) || got < chatTokens(t, "") {
				t.Errorf("prompt_tokens %d, honest %d", got, honest)
			}
			if strings.Contains(e.b.resp.text(), nonceB) {
				t.Error("the truncated half (with the nonce) was still seen")
			}
		}},
		{"truncate completions", FaultTruncate, Config{}, "/v1/completions", cmpl, func(t *testing.T, e env) {
			if e.b.resp.Usage.PromptTokens >= e.clean.resp.Usage.PromptTokens {
				t.Errorf("prompt_tokens %d, honest %d", e.b.resp.Usage.PromptTokens, e.clean.resp.Usage.PromptTokens)
			}
		}},
		{"stream-interleave", FaultStreamInterleave, Config{}, "/v1/chat/completions", stream, func(t *testing.T, e env) {
			ids := map[string]bool{}
			for _, ev := range e.b.events {
				ids[ev.ID] = true
			}
			if len(ids) < 2 || e.b.events[1].ID != e.a.events[0].ID {
				t.Errorf("stream ids %v: want B's own and A's", ids)
			}
			if e.b.streamText() != e.clean.streamText() {
				t.Error("interleave changed the content")
			}
		}},
		{"stream-interleave non-stream", FaultStreamInterleave, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.resp.text() != e.clean.resp.text() || e.b.resp.Model != "sim-1" {
				t.Error("stream-interleave changed a non-stream response")
			}
		}},
		{"error-as-200 error body", FaultErrorAs200Body, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.status != 200 || e.b.resp.Error == nil || len(e.b.resp.Choices) != 0 {
				t.Errorf("status %d body %s", e.b.status, e.b.body)
			}
		}},
		{"error-as-200 error body stream", FaultErrorAs200Body, Config{}, "/v1/chat/completions", stream, func(t *testing.T, e env) {
			if e.b.status != 200 || len(e.b.events) != 1 || e.b.events[0].Error == nil {
				t.Errorf("status %d body %s", e.b.status, e.b.body)
			}
		}},
		{"error-as-200 empty choices", FaultErrorAs200Empty, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.status != 200 || e.b.resp.Choices == nil || len(e.b.resp.Choices) != 0 || e.b.resp.Error != nil {
				t.Errorf("status %d body %s", e.b.status, e.b.body)
			}
		}},
		{"error-as-200 abort", FaultErrorAs200Abort, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.status != 200 || e.b.resp.finish() != "abort" {
				t.Errorf("status %d finish %q", e.b.status, e.b.resp.finish())
			}
		}},
		{"error-as-200 abort stream", FaultErrorAs200Abort, Config{}, "/v1/chat/completions", stream, func(t *testing.T, e env) {
			if fin := e.b.events[len(e.b.events)-2]; fin.finish() != "abort" {
				t.Errorf("stream finish %q", fin.finish())
			}
		}},
		{"error-as-200 empty length", FaultErrorAs200EmptyLength, Config{}, "/v1/completions", cmpl, func(t *testing.T, e env) {
			if e.b.resp.finish() != "length" || e.b.resp.Usage.CompletionTokens != 0 || e.b.resp.text() != "" {
				t.Errorf("finish %q completion_tokens %d", e.b.resp.finish(), e.b.resp.Usage.CompletionTokens)
			}
		}},
		{"oversize-200", FaultOversize200, Config{Capacity: 20}, "/v1/chat/completions", func(p string) any { return chatBody("sim-1", false, strings.Repeat(p+" ", 3)) }, func(t *testing.T, e env) {
			if e.clean.status != http.StatusBadRequest || e.b.status != http.StatusOK {
				t.Errorf("clean status %d, faulted %d: want 400 then 200", e.clean.status, e.b.status)
			}
			if e.b.resp.Usage.PromptTokens <= 20 {
				t.Errorf("prompt_tokens %d should be the honest over-capacity count", e.b.resp.Usage.PromptTokens)
			}
		}},
		{"id-echo-mismatch", FaultIDEchoMismatch, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if got := e.b.header.Get("X-Request-Id"); got == "rid-B" || got == "" {
				t.Errorf("echoed %q", got)
			}
			if e.b.header.Get("X-Request-Id") != "rid-A" {
				t.Errorf("echoed %q, want the previous request's rid-A", e.b.header.Get("X-Request-Id"))
			}
		}},
		{"duplicate-id", FaultDuplicateID, Config{}, "/v1/chat/completions", chat, func(t *testing.T, e env) {
			if e.b.resp.ID != e.a.resp.ID || e.b.resp.text() == e.a.resp.text() {
				t.Errorf("ids %s / %s, contents equal %v", e.a.resp.ID, e.b.resp.ID, e.b.resp.text() == e.a.resp.text())
			}
		}},
		{"duplicate-id stream", FaultDuplicateID, Config{}, "/v1/chat/completions", stream, func(t *testing.T, e env) {
			if e.b.events[0].ID != e.a.events[0].ID {
				t.Errorf("ids %s / %s", e.a.events[0].ID, e.b.events[0].ID)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.AllowFaultHeader = true
			ts := newTestServer(t, cfg)
			pb := promptB + " " + nonceB
			var e env
			e.a = post(t, ts, tc.path, tc.body(promptA), "X-Request-Id", "rid-A")
			if e.a.status != 200 && tc.fault != FaultOversize200 {
				t.Fatalf("clean request A: status %d: %s", e.a.status, e.a.body)
			}
			e.b = post(t, ts, tc.path, tc.body(pb), "X-Request-Id", "rid-B", "X-Sim-Fault", string(tc.fault))
			e.clean = post(t, newTestServer(t, tc.cfg), tc.path, tc.body(pb))
			tc.check(t, e)
		})
	}
}

// failedClosed asserts a 500 kv_ownership_violation, never a 200 with
// foreign data.
func failedClosed(t *testing.T, r reply) {
	t.Helper()
	if r.status != http.StatusInternalServerError || r.resp.Error == nil || r.resp.Error.Code != "kv_ownership_violation" {
		t.Errorf("status %d body %s, want 500 kv_ownership_violation", r.status, r.body)
	}
	if bytes.Contains(r.body, []byte(nonceA)) {
		t.Error("foreign data in the error")
	}
}

// TestFaultsFromConfig: Config.Faults applies to every request without
// the header, and the header is ignored unless allowed.
func TestFaultsFromConfig(t *testing.T) {
	ts := newTestServer(t, Config{Faults: []Fault{FaultSilentFallback}})
	if r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, "hi")); r.resp.Model != "sim-fallback-1" {
		t.Errorf("model %q", r.resp.Model)
	}
	ts = newTestServer(t, Config{})
	if r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, "hi"), "X-Sim-Fault", "silent-fallback"); r.resp.Model != "sim-1" {
		t.Errorf("header honoured without AllowFaultHeader: %q", r.resp.Model)
	}
	if _, err := New(Config{Faults: []Fault{"nope"}}); err == nil {
		t.Error("unknown configured fault accepted")
	}
}

// TestErrorAs200Rotates: the plain error-as-200 picks each of its four
// forms for some prompt.
func TestErrorAs200Rotates(t *testing.T) {
	ts := newTestServer(t, Config{Faults: []Fault{FaultErrorAs200}})
	seen := map[string]bool{}
	for i := 0; i < 40 && len(seen) < 4; i++ {
		r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, "prompt variant "+strings.Repeat("x", i)))
		switch {
		case r.resp.Error != nil:
			seen["error"] = true
		case len(r.resp.Choices) == 0:
			seen["empty"] = true
		case r.resp.finish() == "abort":
			seen["abort"] = true
		case r.resp.finish() == "length" && r.resp.Usage.CompletionTokens == 0:
			seen["empty-length"] = true
		default:
			t.Fatalf("error-as-200 served a clean response: %s", r.body)
		}
	}
	if len(seen) != 4 {
		t.Errorf("forms seen: %v", seen)
	}
}

func TestParseFault(t *testing.T) {
	for _, f := range Faults() {
		if got, err := ParseFault(" " + string(f) + " "); err != nil || got != f {
			t.Errorf("ParseFault(%q) = %q, %v", f, got, err)
		}
	}
	if len(Faults()) < 12 {
		t.Errorf("only %d faults", len(Faults()))
	}
	if _, err := ParseFault("stale_kv"); err == nil {
		t.Error("accepted a misspelt fault")
	}
}

// TestFaultRate: with FaultRate the configured faults break that share of
// the requests, spread evenly, and no more.
func TestFaultRate(t *testing.T) {
	ts := newTestServer(t, Config{Faults: []Fault{FaultSilentFallback}, FaultRate: 0.25})
	var faulty []int
	for i := range 12 {
		if r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, "hi")); r.resp.Model == "sim-fallback-1" {
			faulty = append(faulty, i)
		}
	}
	if fmt.Sprint(faulty) != "[3 7 11]" {
		t.Errorf("faulty requests %v, want every fourth: [3 7 11]", faulty)
	}
	for _, rate := range []float64{-0.1, 1.5} {
		if _, err := New(Config{FaultRate: rate}); err == nil {
			t.Errorf("fault rate %v accepted", rate)
		}
	}
}
