// Package index is custody's lookup index of transactions. The ledger (the
// transparency log) is the source of truth; the index is a rebuildable copy
// that makes lookups fast: by request id, tenant, time range, verdict,
// check code, effective model and provider. It also holds the event
// timeline (fallbacks, path changes, violations, canary results), the
// response claims that let several gateway replicas detect a response
// delivered twice (the replay check), and the list of log shards.
//
// Several gateway replicas may share one index (postgres); each writes its
// own log shard, named by its log origin, so a record says which shard and
// leaf it came from.
//
// The index never holds prompt or response text: a Transaction carries only
// commitments to those bytes, and nothing else is added here.
//
// Backends live in subpackages (sqlite, postgres) and are held to one
// contract, the suite in indextest.
package index

import (
	"context"
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
)

// ErrNotFound is returned (wrapped) when a request id, or a paging cursor,
// is not in the index. errors.Is(err, custody.ErrNotFound) also holds.
var ErrNotFound = fmt.Errorf("index: not found: %w", custody.ErrNotFound)

// Index is the contract every backend meets. All methods are safe for
// concurrent use. A write returns only once it is committed.
type Index interface {
	// Put stores records, all in one transaction: either every record of
	// the call is stored or none is. Put is idempotent on the request id:
	// a record replaces the stored one unless the stored one has a greater
	// LeafIndex (so a late duplicate without a leaf index never hides the
	// sequenced one). Within one call, later records win ties.
	Put(ctx context.Context, recs ...Record) error
	// Get returns the record of requestID, or an error wrapping ErrNotFound.
	Get(ctx context.Context, requestID string) (Record, error)
	// Search returns the records matching every set field of q, newest
	// first (by Time, then request id descending).
	Search(ctx context.Context, q Query) ([]Record, error)

	// Stats counts the records of q's span by bucket, requested model,
	// route, provider, response model, verdict, code, fallback and
	// canary, in that order: the overview of the console, computed by the
	// store.
	Stats(ctx context.Context, q StatsQuery) ([]StatsRow, error)
	// Breakdown counts the records of q's window by tenant, code, route
	// or model, each by verdict and canary.
	Breakdown(ctx context.Context, q BreakdownQuery) ([]BreakdownRow, error)

	// AddEvents appends events to the timeline; their ID and, if zero,
	// their Time are assigned by the index.
	AddEvents(ctx context.Context, evs ...Event) error
	// Events returns events matching q, newest first (by Time, then ID).
	Events(ctx context.Context, q EventQuery) ([]Event, error)

	// ClaimResponse records that key (a response id or body digest) was
	// delivered to requestID. It returns the request id that first claimed
	// key within ttl: requestID itself if this is the first claim, or the
	// claim of requestID is repeated, or the earlier claim has expired.
	// It is atomic across every replica sharing the index, and one round
	// trip to the store.
	ClaimResponse(ctx context.Context, key, requestID string, ttl time.Duration) (string, error)
	// PruneClaims deletes expired claims and returns how many. Backends
	// also prune on their own as claims are written, so the table stays
	// bounded by the claims made within one ttl.
	PruneClaims(ctx context.Context) (int64, error)

	// MaxLeafIndex returns the greatest LeafIndex stored for shard, or -1
	// when there is none: where a replica resumes indexing its log.
	MaxLeafIndex(ctx context.Context, shard string) (int64, error)
	// RegisterShard adds s, or updates the URL and key of the shard with
	// the same Origin.
	RegisterShard(ctx context.Context, s Shard) error
	// Shards returns every registered shard, ordered by Origin.
	Shards(ctx context.Context) ([]Shard, error)

	// Close releases the store. It is safe to call more than once.
	Close() error
}

// Shard is one replica's transparency log.
type Shard struct {
	Origin      string // the log's origin line, e.g. "custody.example/log/eu-1"; the key
	URL         string // where the log's checkpoint and tiles are served
	VerifierKey string // the note verifier key of the log's checkpoints
}

// Validate reports whether s can be registered.
func (s *Shard) Validate() error {
	if s.Origin == "" {
		return fmt.Errorf("index: shard without origin: %w", custody.ErrInvalidRequest)
	}
	return nil
}

// Validate reports the first of vs that cannot be stored: what Put and
// AddEvents check before they write anything.
func Validate[T any, P interface {
	*T
	Validate() error
}](vs []T) error {
	for i := range vs {
		if err := P(&vs[i]).Validate(); err != nil {
			return err
		}
	}
	return nil
}
