package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index/internal/sqlq"
)

// ClaimResponse records that key was delivered to requestID and returns
// the first claimant within ttl: one statement, one round trip once pgx
// has cached its prepared form, and with no wait for a WAL flush (see the
// package documentation). Expiry is judged by this replica's clock;
// replicas' clocks need only agree to well within a ttl.
func (x *Index) ClaimResponse(ctx context.Context, key, requestID string, ttl time.Duration) (string, error) {
	if key == "" || requestID == "" || ttl <= 0 {
		return "", fmt.Errorf("index: claim: want a key, a request id and a positive ttl: %w", custody.ErrInvalidRequest)
	}
	now := time.Now().UnixNano()
	var holder string
	if err := x.claims.QueryRow(ctx, sqlq.ClaimSQL, []byte(key), requestID, now+int64(ttl), now).Scan(&holder); err != nil {
		return "", fmt.Errorf("index: claim: %w", err)
	}
	x.pruner.Tick(func(ctx context.Context) error { _, err := x.PruneClaims(ctx); return err })
	return holder, nil
}

// PruneClaims deletes the expired claims.
func (x *Index) PruneClaims(ctx context.Context) (int64, error) {
	tag, err := x.claims.Exec(ctx, sqlq.PruneClaimsSQL, time.Now().UnixNano())
	if err != nil {
		return 0, fmt.Errorf("index: pruning claims: %w", err)
	}
	return tag.RowsAffected(), nil
}
