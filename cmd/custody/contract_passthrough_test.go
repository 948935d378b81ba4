package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The contract faults of the simulator on the wires passed through: a
// Messages client at a kind: anthropic provider (a `custody sim`
// process), a Responses client at a provider with responses: true; each
// caught with its code, plain and streamed, through the real binary, and
// the same requests to a clean simulator verified with contract=ok. The
// cases and requests are the translated matrix's (contract_test.go), on
// the wires where the clause exists: a Messages request has no
// response_format; a Responses request has no stop, and a Response no
// finish_reason to say tool_calls without a call.

// passthroughWire is one pass-through path: the front's dialect and the
// model prefix routed to its provider.
type passthroughWire struct{ dialect, prefix string }

var passthroughWires = []passthroughWire{{"messages", "a-"}, {"responses", "r-"}}

func contractPassthroughConfig(t *testing.T) string {
	var b strings.Builder
	b.WriteString("admin_keys: [adm-test]\ncanaries: {ignore_path_changes: true}\ntenants:\n  - {id: acme, api_keys: [sk-acme]}\nproviders:\n")
	names := []string{"clean"}
	for _, c := range contractMatrix {
		names = append(names, c.fault)
	}
	for _, f := range names {
		simCfg, faults := "", []string{}
		if f != "clean" {
			simCfg, faults = fmt.Sprintf(", sim: {faults: [%q]}", f), []string{f}
		}
		fmt.Fprintf(&b, "  - {name: %q, kind: sim, responses: true, request_id_echo: x-request-id%s}\n", "r-"+f, simCfg)
		fmt.Fprintf(&b, "  - {name: %q, kind: anthropic, engine: llamacpp, base_url: %q, request_id_echo: x-request-id}\n", "a-"+f, startSimProcess(t, faults...))
	}
	b.WriteString("models:\n")
	for _, f := range names {
		for _, p := range []string{"a-", "r-"} {
			fmt.Fprintf(&b, "  - {name: %q, context_window: 32768, routes: [{provider: %q, model: sim-1-0827}]}\n", p+f, p+f)
		}
	}
	return b.String()
}

func TestContractPassthrough(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, contractPassthroughConfig(t)))
	for i, c := range contractMatrix {
		for _, w := range passthroughWires {
			if c.dialects != nil && !slices.Contains(c.dialects, w.dialect) ||
				c.fault == "finish-tool-calls-empty" && w.dialect == "responses" {
				continue
			}
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/stream=%v", c.fault, w.prefix+w.dialect, stream)
				prompt := fmt.Sprintf("acme asks %d: what is the weather in the harbour town today", i)
				t.Run(name, func(t *testing.T) {
					path, body := contractRequest(w.dialect, w.prefix+c.fault, prompt, stream, c.ask)
					want := "flagged"
					if c.rejects[w.dialect] {
						want = "rejected"
					}
					if c.fault == "tool-arguments-invalid" && w.dialect == "messages" {
						// The simulator's Messages input is an object
						// missing the required property: the model's
						// mistake, flagged (not a fragment that no
						// tool_use can carry, which the translated
						// Messages path rejects).
						want = "flagged"
					}
					wantContract(t, s, path, body, want, c.code)
				})
				t.Run(name+"/clean", func(t *testing.T) {
					path, body := contractRequest(w.dialect, w.prefix+"clean", prompt, stream, c.ask)
					wantContract(t, s, path, body, "verified", "ok")
				})
			}
		}
	}
}
