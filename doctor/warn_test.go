package doctor

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/upstream"
)

// TestWarningsLeaveTheSimulatorAlone: serve's start-up warnings send
// nothing to a provider of kind sim (its faults must see only the user's
// traffic), and log a real provider's problems at WARN with the fix.
func TestWarningsLeaveTheSimulatorAlone(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, kind string
		warn       bool
	}{{"sim", "sim", false}, {"real", "openai", true}} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			yaml := "tenants: [{id: a, api_keys: [k]}]\nproviders:\n  - {name: p, kind: " + tc.kind + ", base_url: \"" + srv.URL + "/v1\"}\nmodels:\n  - {name: m, context_window: 8192, routes: [{provider: p, model: x}]}\n"
			cfg, err := config.Parse("t.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			clients := map[string]*upstream.Client{"p": upstream.New(upstream.Config{Name: "p", BaseURL: srv.URL + "/v1"})}
			var logs bytes.Buffer
			fs := Warnings(context.Background(), cfg, clients, slog.New(slog.NewTextHandler(&logs, nil)))
			if got := hits.Load() > 0; got != tc.warn {
				t.Errorf("upstream asked: %v, want %v", got, tc.warn)
			}
			if got := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "fix="); got != tc.warn || (len(fs) > 0) != tc.warn {
				t.Errorf("warned: %v (%d findings), want %v:\n%s", got, len(fs), tc.warn, logs.String())
			}
		})
	}
}
