// Package sqlite is the index backend for one gateway: a SQLite file in
// the data directory, through modernc.org/sqlite (pure Go, no cgo).
//
// The file is in WAL mode with synchronous=NORMAL: a commit survives a
// process crash, and an OS crash may lose the last commits, which is
// acceptable because the index is rebuilt from the ledger (MaxLeafIndex
// says where to resume). Writes go through one connection, so SQLite never
// has two writers to arbitrate; reads use a pool of read-only connections
// that WAL lets run beside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/prune"
	"github.com/custody-gateway/custody/index/internal/sqlq"
)

var _ index.Index = (*Index)(nil)

// readers is the size of the read pool.
const readers = 4

// Index is an index.Index in a SQLite file.
type Index struct {
	sqlq.Store // reads on r; writes, and the claims, on w

	w *sql.DB // the one writer connection
	r *sql.DB // read-only pool

	// Statements of the write path, prepared once on w.
	claim *sql.Stmt
	put   map[int]*putStmts // by row count (putShapes)
	one   oneStmts

	pruner    prune.Pruner
	closeOnce sync.Once
	closeErr  error
}

// pragmas apply to every connection. busy_timeout covers another process
// holding the file (a second gateway by mistake, the sqlite3 shell).
const pragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)"

// Open opens (creating if needed) the index at path and brings its schema
// up to date. Without the log, it stores every record whole, and reading
// one stored by position (OpenWithLog) fails.
func Open(ctx context.Context, path string) (*Index, error) {
	return OpenWithLog(ctx, path, nil)
}

// OpenWithLog opens the index at path as Open does, on the log its
// records' leaves are in: a record whose leaf is in log (integrated) is
// stored by position, its transaction read back from log.
func OpenWithLog(ctx context.Context, path string, log index.Leaves) (*Index, error) {
	if path == "" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return nil, fmt.Errorf("index: sqlite path %q: want a plain file path", path)
	}
	// _txlock=immediate takes the write lock at BEGIN, so a transaction
	// never fails halfway on upgrading a read lock.
	w, err := sql.Open("sqlite", path+"?"+pragmas+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("index: opening %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	x := &Index{w: w}
	if err := migrateBusy(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	// The readers open after the migration, when the file and its WAL exist.
	r, err := sql.Open("sqlite", path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("index: opening %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	x.r = r
	if err := x.prepare(ctx, log); err != nil {
		x.Close()
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	return x, nil
}

func (x *Index) prepare(ctx context.Context, log index.Leaves) error {
	for _, s := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&x.claim, sqlq.ClaimSQL},
	} {
		st, err := x.w.PrepareContext(ctx, s.sql)
		if err != nil {
			return fmt.Errorf("preparing statement: %w", err)
		}
		*s.dst = st
	}
	x.Store = sqlq.Store{Q: db{r: x.r, w: x.w, prepared: map[string]*sql.Stmt{sqlq.ClaimSQL: x.claim}}, Dialect: dialect, Pruner: &x.pruner, Leaves: log}
	return x.preparePut(ctx)
}

// Close waits for a background claim cleanup, then closes the file.
func (x *Index) Close() error {
	x.closeOnce.Do(func() {
		x.pruner.Close()
		for _, st := range []*sql.Stmt{x.claim} {
			if st != nil {
				st.Close()
			}
		}
		x.closePut()
		var errR error
		if x.r != nil {
			errR = x.r.Close()
		}
		errW := x.w.Close()
		if errW != nil {
			x.closeErr = fmt.Errorf("index: closing: %w", errW)
		} else if errR != nil {
			x.closeErr = fmt.Errorf("index: closing: %w", errR)
		}
	})
	return x.closeErr
}
