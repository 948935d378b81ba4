package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/custody-gateway/custody/index/internal/sqlq"
)

// dialect reads a record's JSON with postgres's jsonb operators.
var dialect = sqlq.Dialect{
	Route:    "COALESCE((data::jsonb->>'route')::int, -1)",
	Fallback: "(COALESCE(jsonb_array_length(data::jsonb->'fallback_chain'), 0) > 1 AND (data::jsonb->>'status')::int = 200)",
	Canary:   "COALESCE((data::jsonb->>'canary')::boolean, false)",
}

// querier is the index's two pools as an sqlq.Querier: the claim
// statements run on claims (synchronous_commit=off, see ClaimResponse),
// everything else on pool. pgx caches the prepared form of every
// statement it runs, so nothing is prepared by hand.
type querier struct{ pool, claims *pgxpool.Pool }

func (q querier) on(text string) *pgxpool.Pool {
	if text == sqlq.ClaimSQL || text == sqlq.PruneClaimsSQL {
		return q.claims
	}
	return q.pool
}

func (q querier) Query(ctx context.Context, text string, args ...any) (sqlq.Rows, error) {
	return q.on(text).Query(ctx, text, args...)
}

func (q querier) QueryRow(ctx context.Context, text string, args ...any) sqlq.Row {
	return row{q.on(text).QueryRow(ctx, text, args...)}
}

func (q querier) Exec(ctx context.Context, text string, args ...any) (int64, error) {
	tag, err := q.on(text).Exec(ctx, text, args...)
	return tag.RowsAffected(), err
}

type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error {
	if err := r.Row.Scan(dest...); errors.Is(err, pgx.ErrNoRows) {
		return sqlq.ErrNoRows
	} else {
		return err
	}
}
