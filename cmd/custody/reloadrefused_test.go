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

// TestRefusedReloadKeepsRunners: a reload refused at any step leaves the
// gateway, its canary runner, its eval runner and its webhooks' notifier
// in force as they were: for a bad eval suite (refused before anything is
// built), and for an eval digest key that cannot be read (refused once
// the new gateway and its canary runner exist). (The canaries used to be
// swapped first, for a new runner on a gateway then thrown away: the
// gateway still serving was left with a stopped runner, its routes'
// health frozen, while the new one probed through a gateway nobody
// served; the old eval runner was stopped, and the webhooks swapped.)
func TestRefusedReloadKeepsRunners(t *testing.T) {
	t.Parallel() // its own data dir and ports
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, suite, data string)
	}{
		{"bad suite", func(t *testing.T, suite, _ string) {
			if err := os.WriteFile(suite, []byte(`{"id": "x", "prompt": "p"}`+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"eval key unreadable", func(t *testing.T, _, data string) {
			key := filepath.Join(data, "eval", "digest.key")
			if err := os.Remove(key); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(key, 0o700); err != nil { // unreadable as a file, even for root
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			suite := filepath.Join(dir, "support.jsonl")
			if err := os.WriteFile(suite, []byte(evalSuite), 0o600); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(dir, "data")
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
`, data, suite)
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
			gw, canaries, evals, notifier := a.gw.Load(), a.runner, a.evalRunner, a.notifier.Load()
			tc.spoil(t, suite, data)
			if err := a.reload(cfgPath, ""); err == nil {
				t.Fatal("the reload was accepted")
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
			if a.notifier.Load() != notifier {
				t.Error("the refused reload replaced the webhooks' notifier")
			}
		})
	}
}
