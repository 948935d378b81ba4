package index

import (
	"context"

	"github.com/custody-gateway/custody"
)

// Leaves is the log a record's leaf is in, read back: an index given it
// stores the records of that log by position (shard and leaf index)
// rather than copying each transaction, and reads the transactions here.
// The log is the record; the index only finds it.
type Leaves interface {
	// Origin is the log's shard name (Record.Shard).
	Origin() string
	// Has reports whether the leaf at index is durable, so readable now
	// and for good.
	Has(index uint64) bool
	// Transactions decodes the leaves at the given indices, in order, each
	// one Has. A transaction's Tenant is the log's pseudonym.
	Transactions(ctx context.Context, leaves []uint64) ([]*custody.Transaction, error)
}
