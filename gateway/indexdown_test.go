package gateway

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index/postgres"
	"github.com/custody-gateway/custody/index/postgres/pgtest"
)

// TestIndexOutageSkipsTheSharedReplayCheck: with the postgres index
// unreachable, the replay claim across replicas cannot run. It is
// skipped, never "ok", and the transaction flagged; or refused, 503
// index_unavailable, when checks.on_index_unavailable is reject.
func TestIndexOutageSkipsTheSharedReplayCheck(t *testing.T) {
	for _, policy := range []string{"flag", "reject"} {
		t.Run(policy, func(t *testing.T) {
			proxy, dsn := pgtest.NewProxy(t, pgtest.Schema(t))
			idx, err := postgres.Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { idx.Close() })
			h := newHarness(t, testConfig)
			h.gw.sharedReplay = idx.ClaimResponse
			h.gw.cfg.Checks.OnIndexUnavailable = policy

			resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "before", false))
			if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "verified" || !strings.Contains(resp.Header.Get("Custody-Checks"), "replay=ok") {
				t.Fatalf("index up: %d %s %s", resp.StatusCode, resp.Header.Get("Custody-Checks"), body)
			}

			proxy.Cut()
			resp, body = h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "during", false))
			checks := resp.Header.Get("Custody-Checks")
			if strings.Contains(checks, "replay=ok") {
				t.Fatalf("index down, yet replay=ok: %d %s", resp.StatusCode, checks)
			}
			switch policy {
			case "flag":
				if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "flagged" || !strings.Contains(checks, "replay=index_unavailable") {
					t.Fatalf("index down, flag: %d %s %s %s", resp.StatusCode, resp.Header.Get("Custody-Verdict"), checks, body)
				}
			case "reject":
				if resp.StatusCode != 503 || errCode(t, body) != string(custody.CodeIndexUnavailable) {
					t.Fatalf("index down, reject: %d %s %s", resp.StatusCode, checks, body)
				}
			}
		})
	}
}
