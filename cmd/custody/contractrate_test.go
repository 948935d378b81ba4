package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestContractDropEvent: a route whose simulator breaks the contract of
// half its answers (tool-undeclared at fault_rate 0.5) gets one contract
// event "dropped" on the timeline, naming the route and the broken
// clause's code; an honest route beside it gets none.
func TestContractDropEvent(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	cfg := `admin_keys: [adm-test]
canaries: {ignore_path_changes: true}
checks: {contract_window: 20, contract_min_samples: 10, contract_min_rate: 0.9}
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: honest, kind: sim, request_id_echo: x-request-id}
  - {name: sloppy, kind: sim, request_id_echo: x-request-id, sim: {faults: [tool-undeclared], fault_rate: 0.5}}
models:
  - {name: m-honest, context_window: 32768, routes: [{provider: honest, model: sim-1-0827}]}
  - {name: m-sloppy, context_window: 32768, routes: [{provider: sloppy, model: sim-1-0827}]}
`
	s := startServe(t, dir, "--config", writeConfig(t, dir, cfg))
	// The honest route's answers first: the events go to the index in the
	// order they happen, so once the sloppy route's drop is there, any
	// event of the honest route's would be too.
	for _, model := range []string{"m-honest", "m-sloppy"} {
		for i := range 30 {
			path, body := contractRequest("chat", model, fmt.Sprintf("acme asks %d: what is the weather in the harbour town", i), i%2 == 1, contractAsk{tools: true})
			resp, out := post(t, s.URL+path, "sk-acme", body)
			if model == "m-honest" && resp.StatusCode != 200 {
				t.Fatalf("honest route: %d %.300s", resp.StatusCode, out)
			}
		}
	}
	type event struct {
		Type, Model, Provider, Route, Code, Detail string
	}
	var evs struct{ Data []event }
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, body := get(t, s.URL+"/v1/custody/events?type=contract", "adm-test")
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		evs.Data = nil
		if err := json.Unmarshal([]byte(body), &evs); err != nil {
			t.Fatal(err)
		}
		if len(evs.Data) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(evs.Data) != 1 {
		t.Fatalf("contract events %+v, want one drop of the sloppy route", evs.Data)
	}
	e := evs.Data[0]
	if e.Type != "contract" || e.Route != "m-sloppy/sloppy" || e.Model != "m-sloppy" || e.Provider != "sloppy" ||
		e.Code != "contract_tool_unknown" || !strings.HasPrefix(e.Detail, "dropped pass_rate=") ||
		!strings.Contains(e.Detail, "broken=contract_tool_unknown=") {
		t.Errorf("event %+v", e)
	}
}
