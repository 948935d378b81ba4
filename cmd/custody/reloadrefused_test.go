package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-gateway/custody/config"
)

// TestRefusedReloadKeepsRunners: a reload refused for a bad eval suite
// leaves the gateway, its canary runner and its eval runner in force as
// they were. (The canaries used to be swapped first, for a new runner on
// a gateway then thrown away: the gateway still serving was left with a
// stopped runner, its routes' health frozen, while the new one probed
// through a gateway nobody served.)
func TestRefusedReloadKeepsRunners(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "support.jsonl")
	if err := os.WriteFile(suite, []byte(evalSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "custody.yaml")
	body := fmt.Sprintf(`data_dir: %q
listen: 127.0.0.1:0
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: up, kind: sim, sim: {models: [sim-1-0827]}}]
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: up, model: sim-1-0827}]}
canaries: {interval: 1h}
evals: [{name: support, file: %q, interval: 1h}]
`, filepath.Join(dir, "data"), suite)
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	a, err := start(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	gw, canaries, evals := a.gw.Load(), a.runner, a.evalRunner
	if err := os.WriteFile(suite, []byte(`{"id": "x", "prompt": "p"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.reload(cfgPath, ""); err == nil {
		t.Fatal("a reload with a bad suite was accepted")
	}
	if a.gw.Load() != gw {
		t.Error("the refused reload replaced the gateway")
	}
	if a.runner != canaries {
		t.Error("the refused reload replaced the canary runner (the one serving was stopped)")
	}
	if a.evalRunner != evals {
		t.Error("the refused reload replaced the eval runner")
	}
}
