package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/custody-gateway/custody/index/internal/sqlq"
)

// dialect reads the columns migration 7 added (the record's JSON may be
// in the log, not here).
var dialect = sqlq.Dialect{
	Route:    "route",
	Fallback: "(fallback = 1)",
	Canary:   "(canary = 1)",
}

// db is the index's two pools as an sqlq.Querier: queries read on the
// read-only pool r, Exec writes on the writer w, and the statements in
// prepared (the claim, a write returning a row; prepared once on w) run
// in their prepared form.
type db struct {
	r, w     *sql.DB
	prepared map[string]*sql.Stmt
}

func (d db) Query(ctx context.Context, text string, args ...any) (sqlq.Rows, error) {
	rows, err := d.r.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, err
	}
	return closer{rows}, nil
}

func (d db) QueryRow(ctx context.Context, text string, args ...any) sqlq.Row {
	if st := d.prepared[text]; st != nil {
		return row{st.QueryRowContext(ctx, args...)}
	}
	return row{d.r.QueryRowContext(ctx, text, args...)}
}

func (d db) Exec(ctx context.Context, text string, args ...any) (int64, error) {
	res, err := d.w.ExecContext(ctx, text, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

type closer struct{ *sql.Rows }

func (c closer) Close() { c.Rows.Close() }

type row struct{ *sql.Row }

func (r row) Scan(dest ...any) error {
	if err := r.Row.Scan(dest...); errors.Is(err, sql.ErrNoRows) {
		return sqlq.ErrNoRows
	} else {
		return err
	}
}
