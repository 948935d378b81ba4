package adminapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
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
	srv, _ := serve(t, cfg, rec, Config{Config: cfg, Recorder: rec, Index: idx, Log: l}, logger)
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
