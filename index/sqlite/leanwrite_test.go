package sqlite

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/sqlq"
)

// TestUpgradeToLeanWrites: a file of schema version 1 opens at version 3 (or later)
// with its records intact, without the provider index the write path no
// longer pays for, and still found by provider (through the time index).
func TestUpgradeToLeanWrites(t *testing.T) {
	path := fresh(t)
	atVersion(t, path, 1).Close()

	x := openAt(t, path)
	rec := gatewayRecord(7)
	if err := x.Put(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	wantVersion(t, x, 3)
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

// TestUpgradeToLeanerWrites: a file of schema version 4 opens at version
// 5 with its records and terms intact; record_terms is WITHOUT ROWID, and
// a search for rejected records reads the partial index of the
// unverified ones, which a verified record does not enter.
func TestUpgradeToLeanerWrites(t *testing.T) {
	path := fresh(t)
	db := atVersion(t, path, 4)
	old := gatewayRecord(1)
	old.Verdict, old.Code = custody.Rejected, custody.CodeModelMismatch
	data, err := index.EncodeTransaction(&old.Transaction)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO records (request_id, tenant, time_ns, requested_model, response_model, provider, verdict, code, shard, leaf_index, data) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		old.ID, old.Tenant, old.Time.UnixNano(), old.RequestedModel, old.ResponseModel, old.Provider, string(old.Verdict), string(old.Code), old.Shard, old.LeafIndex, string(data)); err != nil {
		t.Fatal(err)
	}
	for _, term := range index.Terms(&old.Transaction) {
		if _, err := db.Exec(`INSERT INTO record_terms (term, request_id, time_ns) VALUES (?,?,?)`, term, old.ID, old.Time.UnixNano()); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	x := openAt(t, path)
	verified := gatewayRecord(2)
	if err := x.Put(t.Context(), verified); err != nil {
		t.Fatal(err)
	}
	wantVersion(t, x, 5)
	var ddl string
	if err := x.r.QueryRowContext(t.Context(), `SELECT sql FROM sqlite_master WHERE name = 'record_terms'`).Scan(&ddl); err != nil || !strings.Contains(ddl, "WITHOUT ROWID") {
		t.Fatalf("record_terms: %q (%v), want WITHOUT ROWID", ddl, err)
	}
	for _, q := range []index.Query{{Code: custody.CodeModelMismatch}, {Model: old.RequestedModel, Verdict: custody.Rejected}, {Verdict: custody.Rejected}} {
		got, err := x.Search(t.Context(), q)
		if err != nil || len(got) != 1 || got[0].ID != old.ID {
			t.Fatalf("search %+v: %v, %v; want the upgraded record alone", q, got, err)
		}
	}
	if got, err := x.Search(t.Context(), index.Query{Verdict: custody.Verified}); err != nil || len(got) != 1 || got[0].ID != verified.ID {
		t.Fatalf("search for verified: %v, %v", got, err)
	}
	var inIndex int
	if err := x.r.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM records INDEXED BY records_unverified WHERE verdict <> 'verified'`).Scan(&inIndex); err != nil || inIndex != 1 {
		t.Fatalf("records_unverified holds %d rows (%v), want the rejected one alone", inIndex, err)
	}
	sqlText, args := sqlq.SearchSQL(dialect, &index.Query{Verdict: custody.Rejected}, nil)
	plan := explain(t, x, sqlText, args)
	if !strings.Contains(plan, "records_unverified") {
		t.Fatalf("a search for rejected records does not use records_unverified:\n%s", plan)
	}
}

func explain(t *testing.T, x *Index, q string, args []any) string {
	t.Helper()
	rows, err := x.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}

// atVersion creates the index file at path at schema version v, by the
// migrations up to it, and returns it open without this package's Open.
func atVersion(t *testing.T, path string, v int) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_ns INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	ms, err := index.LoadMigrations(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:v] {
		if _, err := db.Exec(m.SQL); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (?, 0)`, m.Version); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// wantVersion fails t unless x's schema is at version v or later.
func wantVersion(t *testing.T, x *Index, v int) {
	t.Helper()
	var version int
	if err := x.r.QueryRowContext(t.Context(), `SELECT MAX(version) FROM schema_version`).Scan(&version); err != nil || version < v {
		t.Fatalf("schema version %d (%v), want %d or later", version, err, v)
	}
}

// TestUpgradeToLeafHeads: a file of schema version 5 opens at version 6
// without the index by shard and leaf or the index of the terms by
// request id; MaxLeafIndex answers from the leaf heads the migration
// filled, and Put raises them.
func TestUpgradeToLeafHeads(t *testing.T) {
	path := fresh(t)
	db := atVersion(t, path, 5)
	for _, r := range []struct {
		id, shard string
		leaf      int64
	}{{"a1", "a", 3}, {"a2", "a", 9}, {"b1", "b", 4}, {"c1", "c", -1}} {
		if _, err := db.Exec(`INSERT INTO records (request_id, tenant, time_ns, requested_model, response_model, provider, verdict, code, shard, leaf_index, data) VALUES (?, 't', 1, 'm', 'm', 'p', 'verified', '', ?, ?, '{}')`, r.id, r.shard, r.leaf); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	x := openAt(t, path)
	wantVersion(t, x, 6)
	for _, name := range []string{"records_shard_leaf", "record_terms_request"} {
		var n int
		if err := x.r.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM sqlite_master WHERE name = ?`, name).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s still there (%d, %v)", name, n, err)
		}
	}
	for shard, want := range map[string]int64{"a": 9, "b": 4, "c": -1, "d": -1} {
		if n, err := x.MaxLeafIndex(t.Context(), shard); err != nil || n != want {
			t.Errorf("MaxLeafIndex(%q) after the upgrade = %d, %v; want %d", shard, n, err, want)
		}
	}
	up := gatewayRecord(20)
	up.Shard = "b"
	if err := x.Put(t.Context(), up); err != nil {
		t.Fatal(err)
	}
	if n, err := x.MaxLeafIndex(t.Context(), "b"); err != nil || n != 20 {
		t.Errorf("MaxLeafIndex(b) after a Put of leaf 20 = %d, %v", n, err)
	}
}

// TestReplaceByWholeKey: a record replaced by a later attempt's leaf
// takes its terms with it, found by their whole key, and a search by a
// code and a model looks each record's model term up by its whole key
// (there is no index of the terms by request id to fall back on).
func TestReplaceByWholeKey(t *testing.T) {
	x := openAt(t, fresh(t))
	first := gatewayRecord(1)
	first.Verdict, first.Code = custody.Rejected, custody.CodeModelMismatch
	first.Fail(custody.CheckModel, custody.CodeModelMismatch, "")
	first.ResponseModel = "other-model"
	later := gatewayRecord(1)
	later.LeafIndex = 5
	older := gatewayRecord(1)
	older.LeafIndex, older.Tenant = 0, "stale"
	if err := x.Put(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	if got, err := x.Search(t.Context(), index.Query{Code: custody.CodeModelMismatch, Model: "other-model"}); err != nil || len(got) != 1 {
		t.Fatalf("search by code and model before the replacement: %v, %v", got, err)
	}
	if err := x.Put(t.Context(), later, older); err != nil {
		t.Fatal(err)
	}
	var terms []string
	rows, err := x.r.QueryContext(t.Context(), `SELECT term FROM record_terms WHERE request_id = ? ORDER BY term`, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var term string
		rows.Scan(&term)
		terms = append(terms, term)
	}
	rows.Close()
	if want := index.Terms(&later.Transaction); strings.Join(terms, ",") != strings.Join(want, ",") {
		t.Fatalf("terms after the replacement: %q, want %q (the later leaf's alone)", terms, want)
	}
	if got, err := x.Get(t.Context(), first.ID); err != nil || got.LeafIndex != 5 || got.Verdict != custody.Verified || got.Tenant == "stale" {
		t.Fatalf("after the replacement: %+v, %v", got, err)
	}
	sqlText, args := sqlq.SearchSQL(dialect, &index.Query{Code: custody.CodeModelMismatch, Model: "sim-1"}, nil)
	plan := explain(t, x, sqlText, args)
	if !strings.Contains(plan, "(term=? AND time_ns=? AND request_id=?)") {
		t.Fatalf("a search by code and model does not look the model term up by its whole key:\n%s", plan)
	}
}
