package ledger

import (
	"context"
	"fmt"
	"sync"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
)

// Has reports whether the leaf at index is durable: journaled and
// acknowledged (pending integration) or in the log.
func (l *Log) Has(index uint64) bool {
	if index < l.integrated.Load() {
		return true
	}
	l.pmu.Lock()
	_, ok := l.pending[index]
	l.pmu.Unlock()
	return ok
}

// Transactions decodes the transaction leaves at the given indices, in
// order: from memory while they wait to be integrated (ledger.batch_max_age),
// else from the log through the bundle cache (an index search's records
// are mostly neighbours, in one bundle). Every index must be durable
// (Has). A transaction's Tenant is its pseudonym.
func (l *Log) Transactions(ctx context.Context, leaves []uint64) ([]*custody.Transaction, error) {
	if len(leaves) == 0 {
		return nil, nil
	}
	out := make([]*custody.Transaction, len(leaves))
	var size uint64 // tessera's integrated size, read once needed
	for i, index := range leaves {
		// Pending first: the resolver marks a leaf integrated before it
		// drops it from pending (as Receipt reads).
		l.pmu.Lock()
		leaf := l.pending[index]
		l.pmu.Unlock()
		if leaf == nil {
			if index >= l.integrated.Load() {
				return nil, fmt.Errorf("leaf %d is not in the log", index)
			}
			if size == 0 {
				var err error
				if size, err = l.reader.IntegratedSize(ctx); err != nil {
					return nil, fmt.Errorf("reading log size: %w", err)
				}
			}
			eb, err := l.bundles.read(ctx, l.reader, index, size)
			if err != nil {
				return nil, err
			}
			if leaf, err = entryAt(eb, index); err != nil {
				return nil, err
			}
		}
		tx, err := verify.DecodeLeaf(leaf)
		if err != nil {
			return nil, fmt.Errorf("leaf %d: %w", index, err)
		}
		out[i] = tx
	}
	return out, nil
}

// bundleCache keeps the last few entry bundles read, parsed: the records
// read back one by one (a receipt, a record's page) are mostly the newest,
// in one bundle a read would otherwise load and parse whole (256 leaves,
// a quarter of a megabyte) for each. A bundle of a given width never
// changes, so an entry is never stale.
type bundleCache struct {
	mu   sync.Mutex
	keys [bundlesCached]bundleKey
	ebs  [bundlesCached]*api.EntryBundle
	next int // the slot the next miss fills
}

// bundlesCached bounds the cache: at most a megabyte of leaves.
const bundlesCached = 4

type bundleKey struct {
	n       uint64
	partial uint8
	set     bool
}

// read returns the entry bundle holding leaf index in a log of size,
// from the cache or from r.
func (c *bundleCache) read(ctx context.Context, r tessera.LogReader, index, size uint64) (*api.EntryBundle, error) {
	n := index / layout.EntryBundleWidth
	k := bundleKey{n: n, partial: layout.PartialTileSize(0, n, size), set: true}
	c.mu.Lock()
	for i := range c.keys {
		if c.keys[i] == k {
			eb := c.ebs[i]
			c.mu.Unlock()
			return eb, nil
		}
	}
	c.mu.Unlock()
	eb, err := readBundle(ctx, r, index, size)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.keys[c.next], c.ebs[c.next] = k, eb
	c.next = (c.next + 1) % bundlesCached
	c.mu.Unlock()
	return eb, nil
}
