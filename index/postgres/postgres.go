// Package postgres is the index backend shared by several gateway
// replicas, through github.com/jackc/pgx/v5.
//
// Replicas share the records, events, claims and shards tables; each
// writes the records of its own log shard. Claims are decided by the
// database (an upsert on the claim key), so a response delivered through
// two replicas is caught as surely as through one. Migrations are
// serialised across replicas by an advisory lock.
//
// Records and events are committed durably (one WAL flush per Put, which
// is why the gateway batches). Claims are on the request path, so they
// commit with synchronous_commit=off, like the sqlite backend's WAL
// without fsync: a claim is visible to every replica at once, and only a
// crash of the database server itself can forget the claims of its last
// few hundred milliseconds.
package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/prune"
	"github.com/custody-gateway/custody/index/internal/sqlq"
)

var _ index.Index = (*Index)(nil)

// Index is an index.Index in a postgres database (the tables live in the
// connection's search_path).
type Index struct {
	sqlq.Store // over pool; the claims over claims

	pool   *pgxpool.Pool
	claims *pgxpool.Pool // synchronous_commit=off: see ClaimResponse

	pruner    prune.Pruner
	closeOnce sync.Once
}

// Open connects to dsn (a postgres:// URL or key=value string, as pgx
// takes them) and brings the schema up to date.
func Open(ctx context.Context, dsn string) (*Index, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's error may quote the DSN, password included: do not wrap it.
		return nil, fmt.Errorf("index: postgres: parsing dsn: %w", errDSN)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("index: postgres: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("index: postgres: %w", err)
	}
	ccfg := cfg.Copy()
	ccfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	claims, err := pgxpool.NewWithConfig(ctx, ccfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("index: postgres: %w", err)
	}
	x := &Index{pool: pool, claims: claims}
	x.Store = sqlq.Store{Q: querier{pool: pool, claims: claims}, Dialect: dialect, Pruner: &x.pruner}
	return x, nil
}

type dsnError struct{}

func (dsnError) Error() string { return "malformed dsn" }

var errDSN error = dsnError{}

// Close waits for a background claim cleanup, then closes the pool.
func (x *Index) Close() error {
	x.closeOnce.Do(func() {
		x.pruner.Close()
		x.claims.Close()
		x.pool.Close()
	})
	return nil
}
