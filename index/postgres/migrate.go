package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/custody-gateway/custody/index"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLock is the pg_advisory_xact_lock key that serialises the
// migrations of replicas starting together ("custody1" in ASCII).
const migrateLock int64 = 0x637573746f647931

// migrate applies, in one transaction, every migration newer than the
// version recorded in schema_version. Re-running it is a no-op. A database
// whose version is newer than this binary knows is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := index.LoadMigrations(migrationFS, "migrations")
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// The lock comes first: two CREATE TABLE IF NOT EXISTS racing
		// can still collide in the catalog.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return fmt.Errorf("migrating: locking: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_ns BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("migrating: %w", err)
		}
		var cur int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&cur); err != nil {
			return fmt.Errorf("migrating: reading schema version: %w", err)
		}
		if cur > len(ms) {
			return fmt.Errorf("migrating: schema version %d is newer than this binary's %d", cur, len(ms))
		}
		for _, m := range ms[cur:] {
			// Exec without arguments uses the simple protocol, which takes
			// the file's several statements at once.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migrating: %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version, applied_ns) VALUES ($1, $2)`, m.Version, time.Now().UnixNano()); err != nil {
				return fmt.Errorf("migrating: %s: %w", m.Name, err)
			}
		}
		return nil
	})
}
