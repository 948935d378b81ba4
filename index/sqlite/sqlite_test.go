package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/indextest"
)

func openAt(t testing.TB, path string) *Index {
	t.Helper()
	x, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func fresh(t testing.TB) string { return filepath.Join(t.TempDir(), "index.db") }

func TestContract(t *testing.T) {
	indextest.Run(t, func(t *testing.T) index.Index { return openAt(t, fresh(t)) })
}

func TestReopen(t *testing.T) {
	indextest.RunReopen(t, func(t *testing.T) func(t *testing.T) index.Index {
		path := fresh(t)
		return func(t *testing.T) index.Index { return openAt(t, path) }
	})
}

func BenchmarkIndex(b *testing.B) {
	indextest.Bench(b, func(b *testing.B) index.Index { return openAt(b, fresh(b)) })
}

func TestOpenRejectsPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", "a?b.db", "a#b.db"} {
		t.Run(p, func(t *testing.T) {
			if x, err := Open(t.Context(), p); err == nil {
				x.Close()
				t.Errorf("Open(%q) succeeded", p)
			}
		})
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := fresh(t)
	x := openAt(t, path)
	if _, err := x.w.ExecContext(t.Context(), `INSERT INTO schema_version (version, applied_ns) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if y, err := Open(t.Context(), path); err == nil {
		y.Close()
		t.Fatal("Open of a schema from the future succeeded")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("err = %v, want a newer-schema error", err)
	}
}

// TestPragmas: the durability and concurrency settings the package
// documents are in force on both pools.
func TestPragmas(t *testing.T) {
	x := openAt(t, fresh(t))
	for _, db := range []*sql.DB{x.w, x.r} {
		for _, p := range []struct{ name, want string }{
			{"journal_mode", "wal"}, {"synchronous", "1"}, {"busy_timeout", "10000"},
		} {
			var got string
			if err := db.QueryRowContext(t.Context(), "PRAGMA "+p.name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != p.want {
				t.Errorf("PRAGMA %s = %q, want %q", p.name, got, p.want)
			}
		}
	}
	if _, err := x.r.ExecContext(t.Context(), `DELETE FROM records`); err == nil {
		t.Error("the read pool can write")
	}
}
