package sqlite

import (
	"database/sql"
	"testing"

	"github.com/custody-gateway/custody/index"
)

// TestUpgradeToLeanWrites: a file of schema version 1 opens at version 3
// with its records intact, without the provider index the write path no
// longer pays for, and still found by provider (through the time index).
func TestUpgradeToLeanWrites(t *testing.T) {
	path := fresh(t)
	v1, err := migrationFS.ReadFile("migrations/001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{string(v1),
		`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_ns INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (1, 0)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	x := openAt(t, path)
	rec := gatewayRecord(7)
	if err := x.Put(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := x.r.QueryRowContext(t.Context(), `SELECT MAX(version) FROM schema_version`).Scan(&version); err != nil || version != 3 {
		t.Fatalf("schema version %d (%v), want 3", version, err)
	}
	var n int
	if err := x.r.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'records_provider'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("records_provider still there (%d, %v)", n, err)
	}
	got, err := x.Search(t.Context(), index.Query{Provider: rec.Provider})
	if err != nil || len(got) != 1 || got[0].ID != rec.ID {
		t.Fatalf("search by provider: %v, %v", got, err)
	}
}

// TestPutRuns: batches of every size up to past a chunk are cut into the
// prepared shapes and stored whole, their terms with them.
func TestPutRuns(t *testing.T) {
	x := openAt(t, fresh(t))
	n := 0
	for _, size := range []int{1, 3, 5, 17, 64, 85, 255, 256, 300} {
		recs := make([]index.Record, size)
		for i := range recs {
			recs[i] = gatewayRecord(n)
			n++
		}
		if err := x.Put(t.Context(), recs...); err != nil {
			t.Fatalf("Put of %d: %v", size, err)
		}
	}
	var records, terms int
	x.r.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM records`).Scan(&records)
	x.r.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM record_terms`).Scan(&terms)
	r0 := gatewayRecord(0)
	if want := n * len(index.Terms(&r0.Transaction)); records != n || terms != want {
		t.Fatalf("%d records and %d terms, want %d and %d", records, terms, n, want)
	}
}
