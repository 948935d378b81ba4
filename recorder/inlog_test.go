package recorder

import (
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/ledger/ledgertest"
)

// TestRecordsStoredByPosition: with serve's sequencing batches (250 ms,
// five times the indexing linger) the records reach an index on the log
// before their leaves are integrated; it stores them by position all the
// same (they are durable), and reads them back whole: from the ledger's
// memory first, from the log's files once integrated.
func TestRecordsStoredByPosition(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	l, err := ledger.Open(ctx, ledger.Config{Dir: filepath.Join(dir, "ledger"), Origin: ledgertest.Origin, BatchMaxAge: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(ctx) })
	path := filepath.Join(dir, "index.db")
	idx, err := sqlite.OpenWithLog(ctx, path, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	r, err := New(ctx, Config{Log: l, Index: idx, TenantIDs: []string{"acme"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	const n = 20
	for i := range n {
		id := fmt.Sprintf("req-%d", i)
		if err := r.Record(ctx, ledgertest.SampleTx(l, id, nil, nil)); err != nil {
			t.Fatal(err)
		}
		if rec, err := r.Lookup(ctx, id); err != nil || rec.Tenant != "acme" || rec.RequestedModel != "glm-5.3" {
			t.Fatalf("Lookup(%s) while queued: %+v, %v", id, rec, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	check := func(when string) {
		t.Helper()
		for i := range n {
			id := fmt.Sprintf("req-%d", i)
			waitFor(t, 5*time.Second, func() bool { return !r.Pending(id) }, id+" indexed")
			if rec, err := idx.Get(ctx, id); err != nil || rec.Tenant != "acme" || rec.RequestedModel != "glm-5.3" || rec.Shard != l.Origin() || rec.ID != id {
				t.Errorf("Get(%s) %s: %+v, %v", id, when, rec, err)
			}
		}
	}
	check("once indexed")
	if l.Size() == n {
		t.Log("every leaf was integrated before it was indexed: the read from memory went untested")
	}
	waitFor(t, 5*time.Second, func() bool { return l.Size() == n }, "integration")
	check("once integrated")
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var byPosition, total int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FILTER (WHERE data = ''), COUNT(*) FROM records`).Scan(&byPosition, &total); err != nil {
		t.Fatal(err)
	}
	if total != n || byPosition != n {
		t.Errorf("%d of %d records stored by position, want all %d", byPosition, total, n)
	}
}
