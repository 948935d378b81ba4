package postgres

import (
	"context"
	"fmt"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/sqlq"
)

// statsSQL groups the window's records; route, fallback chain and status
// live only in the transaction's JSON.
const statsSQL = `SELECT ((time_ns - $1) / $3)::int AS bucket, requested_model,
	COALESCE((data::jsonb->>'route')::int, -1) AS route, provider, response_model, verdict,
	(COALESCE(jsonb_array_length(data::jsonb->'fallback_chain'), 0) > 1 AND (data::jsonb->>'status')::int = 200) AS fallback,
	COUNT(*)
FROM records WHERE time_ns >= $1 AND time_ns < $2
GROUP BY 1, 2, 3, 4, 5, 6, 7
ORDER BY 1, 2, 3, 4, 5, 6, 7`

// Stats counts records by bucket and the fields of index.StatsRow.
func (x *Index) Stats(ctx context.Context, q index.StatsQuery) ([]index.StatsRow, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	rows, err := x.pool.Query(ctx, statsSQL, q.Since.UnixNano(), q.Until.UnixNano(), q.Width())
	if err != nil {
		return nil, fmt.Errorf("index: stats: %w", err)
	}
	defer rows.Close()
	return sqlq.Collect(rows, "stats", sqlq.ScanStats)
}
