package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/eval"
	"github.com/custody-gateway/custody/verify"
)

const evalsConfig = `
tenants:
  - {id: acme, api_keys: [sk-acme], policy: open, use_cases: {gated: gated, locked: locked}}
providers:
  - {name: primary, kind: openai, base_url: "PRIMARY"}
  - {name: backup, kind: openai, base_url: "BACKUP"}
models:
  - name: big
    context_window: 10000
    routes: [{provider: primary}, {provider: backup}]
policies:
  - {name: open, fallback: allow}
  - {name: gated, fallback: allow, require_evals: [s]}
  - {name: locked, fallback: deny, require_evals: [s]}
evals: [{name: s, file: unused.jsonl}]
`

// TestRequireEvals: a policy that requires a suite uses a route only while
// its current path passed it (failing closed before any run), falls back
// or refuses naming the suite otherwise, while a policy that requires
// nothing keeps the route; a path change re-runs the suite through the
// gateway's own pipeline as custody:eval.
func TestRequireEvals(t *testing.T) {
	// Without a runner no suite has passed: the policies that require one
	// fail closed.
	bare := newHarness(t, evalsConfig)
	if resp, body := bare.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", "locked"); resp.StatusCode != 503 || errCode(t, body) != "route_quarantined" {
		t.Errorf("no runner: %d %s", resp.StatusCode, body)
	}

	h := newHarness(t, evalsConfig)
	cases, err := eval.Parse("s.jsonl", []byte(`{"id": "recall", "prompt": "remember this", "assert": {"not_contains": "cannot"}}`))
	if err != nil {
		t.Fatal(err)
	}
	runner, err := eval.New(context.Background(), eval.Config{Suites: []*eval.Suite{{Name: "s", Cases: cases, Threshold: 1, Rate: 100}}, Routes: eval.Routes(h.gw.Routes())})
	if err != nil {
		t.Fatal(err)
	}
	h.gw.SetEvals(runner) // before serving, as serve does
	ask := func(useCase string) (*http.Response, string) {
		return h.do("POST", "/v1/chat/completions", "sk-acme", chat("big", "hi", false), "Custody-Use-Case", useCase)
	}
	if resp, body := ask("locked"); resp.StatusCode != 503 || errCode(t, body) != "route_quarantined" || !strings.Contains(body, "evaluation suite s") {
		t.Errorf("before any run: %d %s", resp.StatusCode, body)
	}
	if resp, body := ask("gated"); resp.StatusCode != 503 || errCode(t, body) != "route_quarantined" {
		t.Errorf("no route has passed: %d %s", resp.StatusCode, body)
	}
	if resp, body := ask(""); resp.StatusCode != 200 || resp.Header.Get("Custody-Provider") != "primary" {
		t.Errorf("a policy without require_evals: %d %s", resp.StatusCode, body)
	}

	reps, err := runner.RunOnce(context.Background(), eval.RunOptions{})
	if err != nil || len(reps) != 2 || !eval.AllOK(reps) {
		t.Fatalf("runs on the honest routes: %+v %v", reps, err)
	}
	h.rec.mu.Lock()
	evalTx := h.rec.txs[len(h.rec.txs)-1]
	h.rec.mu.Unlock()
	if evalTx.Tenant != config.EvalPrincipal || !evalTx.Canary || evalTx.Policy != canaryPolicy.Name || len(evalTx.FallbackChain) != 1 {
		t.Errorf("an eval case's exchange: %+v", evalTx)
	}
	for _, uc := range []string{"gated", "locked"} {
		if resp, body := ask(uc); resp.StatusCode != 200 || resp.Header.Get("Custody-Provider") != "primary" {
			t.Errorf("%s after passing: %d %s", uc, resp.StatusCode, body)
		}
	}

	// The primary moves to a new build that no longer does the job.
	h.primary.mutate = func(m map[string]any, _ *http.Request) {
		m["system_fingerprint"] = "fp_2"
		m["choices"] = []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "I cannot recall."}}}
	}
	if resp, _ := ask(""); resp.StatusCode != 200 {
		t.Fatalf("the first request on the new path: %d", resp.StatusCode)
	}
	// The trigger runs in its own goroutine: wait for its run to finish.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if rep := runner.Last(); len(rep) == 2 && rep[0].Trigger == eval.TriggerPathChange {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no re-run after the path change: %+v", runner.Last())
		}
	}
	runner.Wait()
	if runner.Passed("s", "big", 0) || !runner.Passed("s", "big", 1) {
		t.Fatalf("after the path change: primary %v, backup %v", runner.Passed("s", "big", 0), runner.Passed("s", "big", 1))
	}
	if resp, body := ask("gated"); resp.StatusCode != 200 || resp.Header.Get("Custody-Fallback") != "primary>backup" {
		t.Errorf("gated falls back: %d %s %s", resp.StatusCode, resp.Header.Get("Custody-Fallback"), body)
	}
	if resp, body := ask("locked"); resp.StatusCode != 503 || !strings.Contains(body, "route primary of model big has not passed evaluation suite s on its current path (policy locked requires it)") {
		t.Errorf("locked refuses: %d %s", resp.StatusCode, body)
	}
	if resp, _ := ask(""); resp.Header.Get("Custody-Provider") != "primary" {
		t.Errorf("open keeps the primary: %v", resp.Header)
	}

	// The run's leaf and its event.
	last := runner.Last()
	var failed eval.Report
	for _, r := range last {
		if r.Route == "big/primary" {
			failed = r
		}
	}
	id, err := h.gw.RecordEval(context.Background(), failed.Transaction())
	if err != nil {
		t.Fatal(err)
	}
	leaf := h.rec.last(t)
	if leaf.ID != id || leaf.Endpoint != EndpointEval || leaf.Decision != "failed" || leaf.Fingerprint != "fp_2" || leaf.UpstreamModel != "big" ||
		len(leaf.Outcomes) != 2 || leaf.Outcomes[1].Check != eval.CheckEvalCase || !strings.HasPrefix(leaf.Outcomes[1].Detail, "recall ") ||
		!strings.Contains(leaf.Outcomes[0].Detail, "passed=0/1") || !strings.Contains(leaf.Outcomes[0].Detail, "failing=recall") {
		t.Errorf("the eval leaf: %+v", leaf)
	}
	if leaf.Verdict != custody.Flagged {
		t.Errorf("a failed run's leaf is %s, want flagged (an alarm, not a refused request)", leaf.Verdict)
	}
}

// TestEvalLeafOfTheLargestSuite: a run of a suite at eval.MaxCases, every
// case failing with the longest code and id, still fits one leaf.
func TestEvalLeafOfTheLargestSuite(t *testing.T) {
	h := newHarness(t, evalsConfig)
	rep := eval.Report{Suite: strings.Repeat("s", 64), SuiteDigest: strings.Repeat("f", 64), Route: "big/primary", Model: "big",
		Path: eval.Path{Provider: "primary", Model: strings.Repeat("m", 64), Fingerprint: strings.Repeat("f", 64)}, Total: eval.MaxCases}
	for i := range eval.MaxCases {
		id := fmt.Sprintf("%064d", i)
		rep.Cases = append(rep.Cases, eval.CaseResult{ID: id, Code: string(custody.CodeCrossRequestContamination), Digest: strings.Repeat("d", 32)})
		rep.Regressions = append(rep.Regressions, id)
	}
	if _, err := h.gw.RecordEval(context.Background(), rep.Transaction()); err != nil {
		t.Fatal(err)
	}
	leaf, err := verify.EncodeLeaf(ptr(h.rec.last(t)))
	if err != nil {
		t.Fatalf("the leaf of a %d-case run: %v", eval.MaxCases, err)
	}
	t.Logf("%d cases: a leaf of %d bytes (limit %d)", eval.MaxCases, len(leaf), verify.MaxLeafSize)
}

func ptr[T any](v T) *T { return &v }
