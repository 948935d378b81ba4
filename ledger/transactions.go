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
// else from the log, reading each entry bundle once however many of them
// it holds (an index search's records are mostly neighbours). Every index
// must be durable (Has). A transaction's Tenant is its pseudonym.
func (l *Log) Transactions(ctx context.Context, leaves []uint64) ([]*custody.Transaction, error) {
	if len(leaves) == 0 {
		return nil, nil
	}
	out := make([]*custody.Transaction, len(leaves))
	var size uint64 // tessera's integrated size, read once needed
	bundles := map[uint64]*api.EntryBundle{}
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
			n := index / layout.EntryBundleWidth
			eb := bundles[n]
			if eb == nil {
				var err error
				if eb, err = l.bundles.read(ctx, l.reader, n, layout.PartialTileSize(0, n, size)); err != nil {
					return nil, err
				}
				bundles[n] = eb
			}
			j := int(index % layout.EntryBundleWidth)
			if j >= len(eb.Entries) {
				return nil, fmt.Errorf("entry bundle %d has %d entries, not leaf %d", n, len(eb.Entries), index)
			}
			leaf = eb.Entries[j]
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

// read returns bundle n of width partial (0: full), from the cache or
// from r.
func (c *bundleCache) read(ctx context.Context, r tessera.LogReader, n uint64, partial uint8) (*api.EntryBundle, error) {
	k := bundleKey{n: n, partial: partial, set: true}
	c.mu.Lock()
	for i := range c.keys {
		if c.keys[i] == k {
			eb := c.ebs[i]
			c.mu.Unlock()
			return eb, nil
		}
	}
	c.mu.Unlock()
	b, err := r.ReadEntryBundle(ctx, n, partial)
	if err != nil {
		return nil, fmt.Errorf("reading entry bundle %d: %w", n, err)
	}
	eb := &api.EntryBundle{}
	if err := eb.UnmarshalText(b); err != nil {
		return nil, fmt.Errorf("reading entry bundle %d: %w", n, err)
	}
	c.mu.Lock()
	c.keys[c.next], c.ebs[c.next] = k, eb
	c.next = (c.next + 1) % bundlesCached
	c.mu.Unlock()
	return eb, nil
}
