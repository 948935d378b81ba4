package postgres

import (
	"context"
	"fmt"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/sqlq"
)

// RegisterShard adds s or updates the shard with its origin.
func (x *Index) RegisterShard(ctx context.Context, s index.Shard) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if _, err := x.pool.Exec(ctx, sqlq.RegisterShardSQL, s.Origin, index.Column(s.URL), index.Column(s.VerifierKey)); err != nil {
		return fmt.Errorf("index: registering shard %q: %w", s.Origin, err)
	}
	return nil
}

// Shards returns every shard, ordered by origin.
func (x *Index) Shards(ctx context.Context) ([]index.Shard, error) {
	rows, err := x.pool.Query(ctx, sqlq.ShardsSQL)
	if err != nil {
		return nil, fmt.Errorf("index: shards: %w", err)
	}
	defer rows.Close()
	return sqlq.Collect(rows, "shards", sqlq.ScanShard)
}
