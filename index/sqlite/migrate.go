package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/custody-gateway/custody/index"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate applies, in one transaction, every migration newer than the
// version recorded in schema_version. Re-running it is a no-op. A file
// whose version is newer than this binary knows is refused rather than
// written to with an older idea of the schema.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := index.LoadMigrations(migrationFS, "migrations")
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_ns INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	var cur int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&cur); err != nil {
		return fmt.Errorf("migrating: reading schema version: %w", err)
	}
	if cur > len(ms) {
		return fmt.Errorf("migrating: schema version %d is newer than this binary's %d", cur, len(ms))
	}
	for _, m := range ms[cur:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrating: %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied_ns) VALUES ($1, $2)`, m.Version, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("migrating: %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	return nil
}

// migrateBusy migrates, retrying while another connection holds the file
// as it switches a new file to WAL: SQLite answers SQLITE_BUSY then
// without waiting for busy_timeout. Two replicas opening one new file at
// once both start. It gives up after busyRetry.
func migrateBusy(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(busyRetry)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := migrate(ctx, db)
		var e *sqlite.Error
		if err == nil || !errors.As(err, &e) || e.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// busyRetry bounds migrateBusy, as busy_timeout bounds every other wait.
const busyRetry = 10 * time.Second
