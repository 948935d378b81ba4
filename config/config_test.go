package config

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

const good = `
listen: 127.0.0.1:9090
admin_keys: ["${ADMIN}"]
tenants:
  - id: acme
    api_keys: ["sk-acme-1"]
    use_cases: {code-generation: strict}
providers:
  - name: primary
    kind: openai
    base_url: http://127.0.0.1:9000/v1
    api_key: ${PRIMARY_KEY:-none}
    timeout: 5s
  - name: backup
    kind: sim
models:
  - name: glm
    context_window: 1048576
    verified_capacity: 681280
    routes:
      - provider: primary
        model: glm-0827
      - provider: backup
policies:
  - name: strict
    fallback: deny
    regions: [eu-west-1]
    require_pinned: true
`

func TestParseGood(t *testing.T) {
	c, err := Parse("good.yaml", []byte(good), env(map[string]string{"ADMIN": "adm-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.AdminKeys[0] != "adm-1" {
		t.Errorf("admin key not interpolated: %q", c.AdminKeys[0])
	}
	if c.Providers[0].APIKey != "none" {
		t.Errorf("default not applied: %q", c.Providers[0].APIKey)
	}
	if c.Providers[0].Timeout != 5*time.Second || c.Providers[1].Timeout != 120*time.Second {
		t.Errorf("timeouts: %v %v", c.Providers[0].Timeout, c.Providers[1].Timeout)
	}
	m := c.Models[0]
	if m.Capacity() != 681280 {
		t.Errorf("capacity = %d", m.Capacity())
	}
	if m.Routes[1].Model != "glm" || m.Routes[0].Accept[0] != "glm-0827" {
		t.Errorf("route defaults: %+v", m.Routes)
	}
	if m.Tokenizer != "o200k_base" || m.PromptTokenSlack != (Slack{8, 64}) {
		t.Errorf("model defaults: %+v", m)
	}
	if c.Tenants[0].Policy != "default" || len(c.Policies) != 2 {
		t.Errorf("default policy not added: %+v", c.Policies)
	}
	if c.Limits.MaxConnections != 4096 || c.Limits.MaxStreamBytes != 64<<20 {
		t.Errorf("limits defaults (docs/configuration.md): %+v", c.Limits)
	}
	if c.Limits.MaxResponseBytes != 32<<20 || c.Limits.MaxEventBytes != 1<<20 || c.Limits.MaxInflightBytes != 1<<30 {
		t.Errorf("memory limits defaults: %+v", c.Limits)
	}
	if c.Limits.MaxBodyBytes != 32<<20 || c.Ledger.BatchMaxAge != 250*time.Millisecond {
		t.Errorf("limits/ledger defaults: %+v %+v", c.Limits, c.Ledger)
	}
}

func TestDefaultIsValid(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.DataDir != "./custody-data" || c.Tenants[0].ID != "local" ||
		!c.Tenants[0].AnonymousLoopback || c.Providers[0].Kind != KindSim {
		t.Errorf("defaults differ from the quick start (README.md): %+v", c)
	}
}

func TestParseReportsEveryProblemAtOnce(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		want []string // each must appear in the error, all at once
	}{
		{
			name: "unknown keys at every depth",
			yaml: "listn: x\ntenants:\n  - id: a\n    api_kyes: [k]\n    api_keys: [k]\nproviders:\n  - name: p\n    kind: sim\n    colour: red\nmodels:\n  - name: m\n    context_window: 10\n    routes: [{provider: p, modle: x}]\n",
			want: []string{"f.yaml: listn: unknown key", "tenants[0].api_kyes: unknown key", "providers[0].colour: unknown key", "models[0].routes[0].modle: unknown key"},
		},
		{
			name: "bad values",
			yaml: "listen: nope\nindex: {backend: mongo}\ntenants:\n  - id: a\n    policy: nosuch\n    models: [ghost]\nproviders:\n  - name: p\n    kind: openai\n    base_url: ftp://x\n  - name: p\n    kind: weird\nmodels:\n  - name: m\n    context_window: 0\n    tokenizer: gpt2\n    routes: [{provider: q}]\npolicies:\n  - name: default\n    fallback: maybe\n    on_contamination: ignore\n    on_contract: maybe\ncanaries: {probes: [echo, vibes]}\n",
			want: []string{"listen: not a host:port", "index.backend", "tenants[0]: needs api_keys", "tenants[0].policy: unknown policy \"nosuch\"",
				"tenants[0].models[0]: unknown model \"ghost\"", "providers[0].base_url", "providers[1].name: duplicate provider", "providers[1].kind",
				"models[0].context_window", "models[0].tokenizer", "models[0].routes[0].provider: unknown provider \"q\"",
				"policies[0].fallback", "policies[0].on_contamination", "policies[0].on_contract", "canaries.probes[1]: unknown probe \"vibes\""},
		},
		{
			name: "unset environment variable",
			yaml: "admin_keys: [\"${NOPE}\"]\ntenants: [{id: a, anonymous_loopback: true}]\n",
			want: []string{"admin_keys[0]: environment variable NOPE is not set"},
		},
		{
			name: "wrong type",
			yaml: "tenants: [{id: a, anonymous_loopback: true}]\nlimits: {max_body_bytes: lots}\n",
			want: []string{"cannot unmarshal"},
		},
		{
			name: "memory limits zero",
			yaml: "tenants: [{id: a, anonymous_loopback: true}]\nlimits: {max_response_bytes: 0, max_event_bytes: 0, max_inflight_bytes: 0}\n",
			want: []string{"f.yaml: limits.max_response_bytes: must be a positive number of bytes (leave it out for the default), got 0",
				"limits.max_event_bytes: must be a positive", "limits.max_inflight_bytes: must be a positive"},
		},
		{
			name: "memory limits negative",
			yaml: "tenants: [{id: a, anonymous_loopback: true}]\nlimits: {max_response_bytes: -1, max_event_bytes: -5, max_inflight_bytes: -1}\n",
			want: []string{"limits.max_response_bytes: must be a positive number of bytes (leave it out for the default), got -1",
				"limits.max_event_bytes: must be a positive number of bytes (leave it out for the default), got -5",
				"limits.max_inflight_bytes: must be a positive"},
		},
		{
			name: "inflight budget under one answer",
			yaml: "tenants: [{id: a, anonymous_loopback: true}]\nlimits: {max_response_bytes: 2000000, max_inflight_bytes: 1000000}\n",
			want: []string{"limits.max_inflight_bytes: must be at least limits.max_response_bytes (2000000) and limits.max_event_bytes (1048576)"},
		},
		{
			name: "not yaml",
			yaml: "tenants: [\n",
			want: []string{"f.yaml: (file):"},
		},
		{
			name: "duplicate tenant key",
			yaml: "tenants:\n  - {id: a, api_keys: [k]}\n  - {id: b, api_keys: [k]}\n",
			want: []string{"tenants[1].api_keys[0]: key already belongs to tenant \"a\""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.yaml), env(tc.env))
			if err == nil {
				t.Fatal("accepted a bad config")
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T, want Errors", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("missing %q in:\n%v", w, err)
				}
			}
		})
	}
}

func TestInterpolatedValueIsNotYAML(t *testing.T) {
	y := "tenants: [{id: a, api_keys: [\"${K}\"]}]\n"
	c, err := Parse("f.yaml", []byte(y), env(map[string]string{"K": "[x, y]: z"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Tenants[0].APIKeys[0] != "[x, y]: z" {
		t.Errorf("got %q", c.Tenants[0].APIKeys[0])
	}
}

// TestInterpolateTypedValues: ${VAR} in a numeric, boolean or duration
// field takes the variable's value as that type; a quoted or !!str-tagged
// reference stays a string, and a variable holding YAML syntax or a null
// word is still data.
func TestInterpolateTypedValues(t *testing.T) {
	y := `
tenants:
  - {id: a, api_keys: ["${K}"]}
  - id: b
    api_keys:
      - ${NULLKEY}
providers:
  - name: p
    kind: sim
    timeout: "${TIMEOUT}"
    breaker_threshold: ${THRESHOLD}
models:
  - name: m
    context_window: ${WINDOW}
    verified_capacity: ${CAPACITY:-2048}
    routes: [{provider: p}]
policies:
  - name: default
    require_pinned: ${PINNED}
limits:
  max_body_bytes: ${BODY}
`
	c, err := Parse("f.yaml", []byte(y), env(map[string]string{
		"K": "12345", "NULLKEY": "null", "TIMEOUT": "7s", "THRESHOLD": "3",
		"WINDOW": "4096", "PINNED": "true", "BODY": "1_048_576",
	}))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Models[0]
	if m.ContextWindow != 4096 || m.VerifiedCapacity != 2048 {
		t.Errorf("context_window %d, verified_capacity %d", m.ContextWindow, m.VerifiedCapacity)
	}
	if p := c.Providers[0]; p.Timeout != 7*time.Second || p.BreakerThreshold != 3 {
		t.Errorf("timeout %v, breaker_threshold %d", p.Timeout, p.BreakerThreshold)
	}
	if !c.Policies[0].RequirePinned || c.Limits.MaxBodyBytes != 1<<20 {
		t.Errorf("require_pinned %v, max_body_bytes %d", c.Policies[0].RequirePinned, c.Limits.MaxBodyBytes)
	}
	if c.Tenants[0].APIKeys[0] != "12345" || c.Tenants[1].APIKeys[0] != "null" {
		t.Errorf("keys %q %q", c.Tenants[0].APIKeys, c.Tenants[1].APIKeys)
	}

	_, err = Parse("f.yaml", []byte("tenants: [{id: a, anonymous_loopback: true}]\nlimits:\n  max_body_bytes: ${BODY}\n"),
		env(map[string]string{"BODY": "lots"}))
	if err == nil || !strings.Contains(err.Error(), "f.yaml: limits.max_body_bytes: ") {
		t.Errorf("a non-numeric value for a numeric key: %v", err)
	}
}

// TestModelFilesMustExist: a file: tokenizer or chat template that cannot
// be read is refused at load, at its key, not later by the tokenizer.
func TestModelFilesMustExist(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/tokenizer.json"
	if err := os.WriteFile(good, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	y := func(tok, tmpl string) string {
		return "tenants: [{id: a, anonymous_loopback: true}]\nproviders: [{name: p, kind: sim}]\n" +
			"models:\n  - name: m\n    context_window: 10\n    tokenizer: \"" + tok + "\"\n    chat_template: \"" + tmpl + "\"\n    routes: [{provider: p}]\n"
	}
	if _, err := Parse("f.yaml", []byte(y("file:"+good, "file:"+good)), env(nil)); err != nil {
		t.Fatalf("readable files refused: %v", err)
	}
	cases := []struct{ name, tok, tmpl, want string }{
		{"missing tokenizer", "file:" + dir + "/nope.json", "auto", "f.yaml: models[0].tokenizer: cannot read " + dir + "/nope.json: "},
		{"tokenizer is a directory", "file:" + dir, "auto", "f.yaml: models[0].tokenizer: " + dir + " is a directory"},
		{"missing template", "o200k_base", "file:" + dir + "/t.jinja", "f.yaml: models[0].chat_template: cannot read " + dir + "/t.jinja: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(y(tc.tok, tc.tmpl)), env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestUnknownKeySuggestsNearest: a key within two edits of one valid at
// its level is named in the error; one far from all of them is not.
func TestUnknownKeySuggestsNearest(t *testing.T) {
	y := "listn: 127.0.0.1:1\ntenants:\n  - id: a\n    api_kyes: [k]\n    api_keys: [k]\nproviders:\n  - name: p\n    kind: sim\n    colour: red\nmodels:\n  - name: m\n    context_windw: 10\n    routes: [{provider: p, modle: x}]\nlimits: {max_body_byte: 2048}\n"
	_, err := Parse("f.yaml", []byte(y), env(nil))
	if err == nil {
		t.Fatal("accepted unknown keys")
	}
	for _, w := range []string{
		`f.yaml: listn: unknown key (line 1); did you mean "listen"?`,
		`tenants[0].api_kyes: unknown key (line 4); did you mean "api_keys"?`,
		`models[0].context_windw: unknown key (line 12); did you mean "context_window"?`,
		`models[0].routes[0].modle: unknown key (line 13); did you mean "model"?`,
		`limits.max_body_byte: unknown key (line 14); did you mean "max_body_bytes"?`,
		"providers[0].colour: unknown key (line 9)\n",
	} {
		if !strings.Contains(err.Error()+"\n", w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
}

// TestReservedTenantIDsRefused: no configured tenant may take the id of
// one of custody's own principals (it would read their receipts).
func TestReservedTenantIDsRefused(t *testing.T) {
	for _, id := range []string{"admin", "Admin", "custody:admin", "custody:canary", "canary", "canary-7", "custody-canary", AdminPrincipal, CanaryPrincipal} {
		y := "tenants: [{id: \"" + id + "\", api_keys: [k]}]\n"
		_, err := Parse("f.yaml", []byte(y), env(nil))
		if err == nil || !strings.Contains(err.Error(), "f.yaml: tenants[0].id: ") || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("tenant id %q: %v", id, err)
		}
	}
	for _, id := range []string{"acme", "administrators", "my-canary", "custody"} {
		if _, err := Parse("f.yaml", []byte("tenants: [{id: \""+id+"\", api_keys: [k]}]\n"), env(nil)); err != nil {
			t.Errorf("tenant id %q refused: %v", id, err)
		}
	}
}

// TestEvalsConfig: suites get their defaults; bad suites, unknown routes
// and unknown required suites are refused at their keys, all at once.
func TestEvalsConfig(t *testing.T) {
	const base = `
tenants: [{id: a, api_keys: [k]}]
providers: [{name: p, kind: sim}]
models: [{name: m, context_window: 4096, routes: [{provider: p}]}]
`
	c, err := Parse("ok.yaml", []byte(base+`
evals: [{name: support, file: s.jsonl, routes: [m/p]}]
policies: [{name: default, require_evals: [support]}]
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Evals[0]; *e.Threshold != 1 || e.Rate != 2 || e.Interval != 0 {
		t.Errorf("defaults: threshold %v rate %v interval %v", *e.Threshold, e.Rate, e.Interval)
	}
	if c.Policies[0].RequireEvals[0] != "support" {
		t.Errorf("require_evals = %v", c.Policies[0].RequireEvals)
	}
	zero, err := Parse("zero.yaml", []byte(base+"evals: [{name: s, file: f, threshold: 0}]\n"), env(nil))
	if err != nil || *zero.Evals[0].Threshold != 0 {
		t.Errorf("threshold 0 must stay 0: %v", err)
	}
	_, err = Parse("bad.yaml", []byte(base+`
evals:
  - {name: "a b", file: f, routes: [m/nope], threshold: 1.5, interval: -1s, rate: -1}
  - {name: dup, file: f}
  - {name: dup}
policies: [{name: default, require_evals: [nope]}]
`), env(nil))
	for _, want := range []string{
		"bad.yaml: evals[0].name:", "evals[0].routes[0]: no route \"m/nope\"", "evals[0].threshold:",
		"evals[0].interval:", "evals[0].rate:", "evals[2].name: duplicate suite \"dup\"", "evals[2].file: required",
		"policies[0].require_evals[0]: unknown suite \"nope\"",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}
