package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/indextest"
	"github.com/custody-gateway/custody/index/postgres/pgtest"
)

// schema is a schema of the test's own on the test server (pgtest.Schema):
// each test gets its own tables, so parallel runs and reruns never meet.
func schema(t testing.TB) string { return pgtest.Schema(t) }

func openAt(t testing.TB, dsn string) *Index {
	t.Helper()
	x, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func TestContract(t *testing.T) {
	indextest.Run(t, func(t *testing.T) index.Index { return openAt(t, schema(t)) })
}

func TestReopen(t *testing.T) {
	indextest.RunReopen(t, func(t *testing.T) func(t *testing.T) index.Index {
		dsn := schema(t)
		return func(t *testing.T) index.Index { return openAt(t, dsn) }
	})
}

func BenchmarkIndex(b *testing.B) {
	indextest.Bench(b, func(b *testing.B) index.Index { return openAt(b, schema(b)) })
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dsn := schema(t)
	x := openAt(t, dsn)
	if _, err := x.pool.Exec(t.Context(), `INSERT INTO schema_version (version, applied_ns) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if y, err := Open(t.Context(), dsn); err == nil {
		y.Close()
		t.Fatal("Open of a schema from the future succeeded")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("err = %v, want a newer-schema error", err)
	}
}

func TestOpenHidesDSN(t *testing.T) {
	_, err := Open(t.Context(), "postgres://user:s3cret@host:notaport/db")
	if err == nil {
		t.Fatal("Open of a malformed DSN succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error shows the password: %v", err)
	}
}

func TestWinners(t *testing.T) {
	rec := func(id string, leaf int64, tenant string) index.Record {
		var r index.Record
		r.ID, r.LeafIndex, r.Tenant = id, leaf, tenant
		return r
	}
	tests := []struct {
		name string
		in   []index.Record
		want []string // id/tenant of each winner
	}{
		{"distinct ids sorted", []index.Record{rec("b", 1, "x"), rec("a", 1, "y")}, []string{"a/y", "b/x"}},
		{"greater leaf wins", []index.Record{rec("a", 5, "x"), rec("a", 2, "y")}, []string{"a/x"}},
		{"later wins a tie", []index.Record{rec("a", 5, "x"), rec("a", 5, "y")}, []string{"a/y"}},
		{"unsequenced loses", []index.Record{rec("a", 0, "x"), rec("a", -1, "y")}, []string{"a/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range winners(tt.in) {
				got = append(got, r.ID+"/"+r.Tenant)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("winners = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestClaimsSkipFlush: the claim pool does not wait for WAL flushes. (The
// record pool keeps the server's setting, on unless an operator chose.)
func TestClaimsSkipFlush(t *testing.T) {
	x := openAt(t, schema(t))
	for _, p := range []struct {
		name string
		pool interface {
			QueryRow(context.Context, string, ...any) pgx.Row
		}
		want string
	}{{"claims", x.claims, "off"}} {
		var got string
		if err := p.pool.QueryRow(t.Context(), "SHOW synchronous_commit").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != p.want {
			t.Errorf("%s pool: synchronous_commit = %q, want %q", p.name, got, p.want)
		}
	}
}
