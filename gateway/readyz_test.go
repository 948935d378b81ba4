package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/custody-gateway/custody/recorder"
)

// TestReadyzFollowsTheLedger: /readyz asks the real ledger, so a ledger
// that cannot take leaves makes the gateway not ready.
func TestReadyzFollowsTheLedger(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := ledgertest.Open(ctx, filepath.Join(dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	idx, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec, err := recorder.New(ctx, recorder.Config{Log: l, Index: idx, TenantIDs: []string{"a"}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	cfg, err := config.Parse("t.yaml", []byte("tenants: [{id: a, anonymous_loopback: true}]\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := New(Options{Config: cfg, Recorder: rec, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	readyz := func() (int, string) {
		resp, err := srv.Client().Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := readyz(); code != 200 {
		t.Fatalf("/readyz with a writable ledger: %d %s", code, body)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if code, body := readyz(); code != 503 || !strings.Contains(body, "ledger_unavailable") {
		t.Fatalf("/readyz with a closed ledger: %d %s", code, body)
	}
}
