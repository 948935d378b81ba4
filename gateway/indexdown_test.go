package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/index/postgres"
	"github.com/custody-gateway/custody/index/postgres/pgtest"
	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/custody-gateway/custody/recorder"
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

// TestIndexOutageAdminAnswers503: records, events and receipts the index
// cannot look up are 503 index_unavailable with a reason, not 500 or a
// 404 that says a recorded transaction does not exist.
func TestIndexOutageAdminAnswers503(t *testing.T) {
	ctx := t.Context()
	proxy, dsn := pgtest.NewProxy(t, pgtest.Schema(t))
	idx, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	l, err := ledgertest.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec, err := recorder.New(ctx, recorder.Config{Log: l, Index: idx, TenantIDs: []string{"acme"}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	cfg, err := config.Parse("t.yaml", []byte("admin_keys: [adm-test]\ntenants: [{id: acme, api_keys: [sk-acme]}]\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := New(Options{Config: cfg, Recorder: rec, Logger: logger, Evidence: &Evidence{Recorder: rec, Index: idx, Log: l}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	get := func(path, key string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/v1/custody/records", "adm-test"); code != 200 {
		t.Fatalf("records, index up: %d %s", code, body)
	}
	// A transaction recorded and indexed before the outage.
	if err := rec.Record(ctx, ledgertest.SampleTx(l, "req-indexed", nil, nil)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := idx.Get(ctx, "req-indexed"); err == nil && l.Size() > 0 && !rec.Pending("req-indexed") {
			break // it is the index's to answer now
		}
		if time.Now().After(deadline) {
			t.Fatal("never indexed")
		}
	}

	proxy.Cut()
	// Its receipt comes from the ledger while the index is down.
	if code, body := get("/v1/custody/receipts/req-indexed", "sk-acme"); code != 200 || !strings.Contains(body, `"req-indexed"`) {
		t.Errorf("an indexed receipt, index down: %d %s", code, body)
	}
	for _, c := range []struct{ path, key string }{
		{"/v1/custody/records", "adm-test"},
		{"/v1/custody/events", "adm-test"},
		{"/v1/custody/receipts/req-somewhere", "sk-acme"},
	} {
		code, body := get(c.path, c.key)
		if code != 503 || errCode(t, body) != string(custody.CodeIndexUnavailable) || !strings.Contains(body, "the index is unavailable") {
			t.Errorf("%s, index down: %d %s", c.path, code, body)
		}
	}
}
