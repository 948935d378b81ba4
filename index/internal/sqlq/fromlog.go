package sqlq

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-gateway/custody/index"
)

// errNoLeaves is a record stored by position read without its log.
var errNoLeaves = errors.New("the record is stored as its leaf in the log, and the index was opened without the log")

// FromLog returns the records of stored, reading those stored by
// position from s.Leaves: one read of the log for them all. A leaf must
// be the transaction its row names (request id); its tenant is the row's
// (the leaf has the pseudonym).
func (s Store) FromLog(ctx context.Context, stored []Stored) ([]index.Record, error) {
	out := make([]index.Record, len(stored))
	var at []int
	var leaves []uint64
	for i := range stored {
		out[i] = stored[i].Record
		if !stored[i].InLog {
			continue
		}
		r := &stored[i].Record
		if s.Leaves == nil || r.Shard != s.Leaves.Origin() || r.LeafIndex < 0 {
			return nil, fmt.Errorf("request %q (leaf %d of %s): %w", r.ID, r.LeafIndex, r.Shard, errNoLeaves)
		}
		at = append(at, i)
		leaves = append(leaves, uint64(r.LeafIndex))
	}
	if len(at) == 0 {
		return out, nil
	}
	txs, err := s.Leaves.Transactions(ctx, leaves)
	if err != nil {
		return nil, fmt.Errorf("reading records from the log: %w", err)
	}
	for k, i := range at {
		tx, row := txs[k], &stored[i].Record
		if tx.ID != row.ID {
			return nil, fmt.Errorf("reading records from the log: leaf %d of %s is request %q, the index says %q", row.LeafIndex, row.Shard, tx.ID, row.ID)
		}
		tx.Tenant = row.Tenant
		tx.Time = tx.Time.UTC()
		out[i].Transaction = *tx
	}
	return out, nil
}
