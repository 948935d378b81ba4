package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// evalToolSuite: cases that declare a tool, whose assertions any answer
// without a forbidden word passes: a run fails only on its contract.
const evalToolSuite = `{"id": "w1", "prompt": "what is the weather in the harbour town", "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}], "assert": {"not_contains": "zzz-forbidden"}}
{"id": "w2", "prompt": "what is the weather in the hill town", "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}], "assert": {"not_contains": "zzz-forbidden"}}
{"id": "w3", "prompt": "what is the weather in the river town", "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}], "assert": {"not_contains": "zzz-forbidden"}}
{"id": "w4", "prompt": "what is the weather in the valley town", "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}], "assert": {"not_contains": "zzz-forbidden"}}
`

// TestEvalContractPassRate: custody eval fails a suite with
// contract_pass_rate on a route whose simulator breaks half its answers'
// tool arguments (flagged, served: every case's assertion passes), and
// says why, naming the code; the same suite passes on an honest route,
// and without the requirement on the sloppy one.
func TestEvalContractPassRate(t *testing.T) {
	t.Parallel() // its own data dirs and ports
	dir := t.TempDir()
	suite := filepath.Join(dir, "tools.jsonl")
	if err := os.WriteFile(suite, []byte(evalToolSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sim, require string
		code               int
	}{
		{"honest route", "{}", ", contract_pass_rate: 0.99", 0},
		{"half broken", "{faults: [tool-arguments-invalid], fault_rate: 0.5}", ", contract_pass_rate: 0.99", 1},
		{"half broken, no rate required", "{faults: [tool-arguments-invalid], fault_rate: 0.5}", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := t.TempDir()
			cfg := writeConfig(t, sub, `
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: up, kind: sim, sim: `+tc.sim+`}]
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: up, model: sim-1-0827}]}
evals: [{name: tools, file: "`+suite+`", rate: 20`+tc.require+`}]
`)
			code, out, errOut := runCmd(t, sub, "eval", "--config", cfg, "--suite", "tools")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
			// Every case passed its assertion (4/4); the rate failed the
			// run. (Which of the four answers break depends on what else
			// the simulator served first: the gateway's probe.)
			if tc.code == 1 && (!regexp.MustCompile(`contract pass rate 0\.\d\d \([0-3]/4\) below 0\.99: broken contract_arguments_invalid=[1-4]`).MatchString(out) ||
				!strings.Contains(out, "4/4")) {
				t.Errorf("the table does not say the contract failed it, with the code:\n%s", out)
			}
		})
	}
}
