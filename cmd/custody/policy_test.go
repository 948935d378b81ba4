package main

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody/internal/refused"
)

// TestPoliciesOnSimulatedProviders runs docs/configuration.md's two policies on the
// real binary: summaries may fall back anywhere; code generation stays on
// the pinned snapshot in the EU.
func TestPoliciesOnSimulatedProviders(t *testing.T) {
	t.Parallel() // its own data dir and ports
	down := "http://" + refused.Addr(t) + "/v1"
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, `
tenants:
  - id: acme
    api_keys: [sk-acme]
    policy: summaries
    use_cases: {code-generation: eu-pinned, us-only: us-only}
providers:
  - {name: us-primary, kind: openai, base_url: "`+down+`", region: us-east-1}
  - {name: eu, kind: sim, region: eu-west-1}
  - {name: eu-drifting, kind: sim, region: eu-west-1, sim: {faults: [snapshot-drift]}}
models:
  - name: m
    context_window: 32768
    routes: [{provider: us-primary, model: sim-1}, {provider: eu, model: sim-1}]
  - name: pinned
    context_window: 32768
    routes: [{provider: eu-drifting, model: sim-1-0827, accept: [sim-1-0827, sim-1-0901]}]
policies:
  - {name: summaries, fallback: allow}
  - {name: eu-pinned, fallback: deny, regions: [eu-west-1], require_pinned: true}
  - {name: us-only, fallback: deny, regions: [us-east-1]}
`))
	ask := func(model, useCase string) (int, string, map[string]string) {
		resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody(model, "summarise the meeting", false), "Custody-Use-Case", useCase)
		h := map[string]string{}
		for _, k := range []string{"Custody-Fallback", "Custody-Provider", "Custody-Model", "Custody-Verdict"} {
			h[k] = resp.Header.Get(k)
		}
		return resp.StatusCode, body, h
	}
	if code, body, h := ask("m", ""); code != 200 || h["Custody-Fallback"] != "us-primary>eu" || h["Custody-Provider"] != "eu" {
		t.Errorf("summaries fall back, visibly: %d %v %.200s", code, h, body)
	}
	if code, body, h := ask("m", "code-generation"); code != 200 || h["Custody-Fallback"] != "none" || h["Custody-Provider"] != "eu" {
		t.Errorf("code generation goes to the EU route, which is no fallback: %d %v %.200s", code, h, body)
	}
	if code, body, _ := ask("m", "us-only"); code != 503 || outcome(code, body) != "fallback_not_permitted" || !strings.Contains(body, "us-primary") {
		t.Errorf("a policy that forbids fallback names the primary's failure: %d %s", code, body)
	}
	if code, body, _ := ask("pinned", "code-generation"); code != 502 || outcome(code, body) != "model_mismatch" {
		t.Errorf("the pinned policy refuses the drifted snapshot: %d %s", code, body)
	}
	if code, body, h := ask("pinned", ""); code != 200 || h["Custody-Model"] != "sim-1-0901" {
		t.Errorf("the route's accept list serves it to summaries: %d %v %.200s", code, h, body)
	}
	if code, body, _ := ask("m", "poetry"); code != 400 || outcome(code, body) != "invalid_request" {
		t.Errorf("an unknown use case is a 400: %d %s", code, body)
	}
}
