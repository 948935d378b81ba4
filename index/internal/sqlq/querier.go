package sqlq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/prune"
)

// Querier is the one shape both backends give their store: database/sql
// for sqlite, a pgx pool for postgres. The read paths and the shared
// statements below are written once against it, so the two backends
// differ only in how they write in bulk and in Dialect.
type Querier interface {
	// Query runs a statement returning rows; the caller closes them.
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// QueryRow runs a statement returning at most one row; its Scan
	// returns ErrNoRows when there is none.
	QueryRow(ctx context.Context, sql string, args ...any) Row
	// Exec runs a statement and returns the rows it affected.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
}

// Row is one row of QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// ErrNoRows is what a Querier's Row.Scan returns for no row: each
// backend's adapter maps its driver's own error to it.
var ErrNoRows = errors.New("sqlq: no rows")

// Closer is what Rows of a Querier also have: database/sql's Close
// returns an error, pgx's does not, so adapters expose this one.
type Closer interface{ Close() }

// Dialect is what the two SQL dialects spell differently: reading the
// fields that live only in a record's JSON.
type Dialect struct {
	Route    string // the route index as an integer, -1 when none served
	Fallback string // true when a route after the first served (status 200)
	Canary   string // true for synthetic traffic (a canary probe's or an eval's)
}

// Store is what the backends share: every method of index.Index but the
// bulk writes (Put, AddEvents) and Close, over a backend's Querier and
// Dialect. A backend embeds it.
type Store struct {
	Q       Querier
	Dialect Dialect
	// Pruner deletes expired claims in the background as claims are
	// made; the backend closes it.
	Pruner *prune.Pruner
	// Leaves reads the transactions of the records stored by position
	// (Stored.InLog); nil if the backend stores none so.
	Leaves index.Leaves
}

// Get returns the record of requestID.
func (s Store) Get(ctx context.Context, requestID string) (index.Record, error) {
	r, err := ScanRecord(s.Q.QueryRow(ctx, `SELECT `+RecordColumns+` FROM records r WHERE request_id = $1`, requestID))
	if errors.Is(err, ErrNoRows) {
		return index.Record{}, fmt.Errorf("index: request %q: %w", requestID, index.ErrNotFound)
	}
	if err != nil {
		return index.Record{}, fmt.Errorf("index: get %q: %w", requestID, err)
	}
	recs, err := s.FromLog(ctx, []Stored{r})
	if err != nil {
		return index.Record{}, fmt.Errorf("index: get %q: %w", requestID, err)
	}
	return recs[0], nil
}

// Search returns the records matching q, newest first.
func (s Store) Search(ctx context.Context, q index.Query) ([]index.Record, error) {
	var cur *Cursor
	if q.Before != "" {
		c := Cursor{RequestID: q.Before}
		err := s.Q.QueryRow(ctx, CursorSQL, q.Before).Scan(&c.TimeNS)
		if errors.Is(err, ErrNoRows) {
			return nil, fmt.Errorf("index: search: cursor %q: %w", q.Before, index.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		cur = &c
	}
	text, args := SearchSQL(s.Dialect, &q, cur)
	stored, err := query(ctx, s.Q, "search", ScanRecord, text, args...)
	if err != nil {
		return nil, err
	}
	recs, err := s.FromLog(ctx, stored)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	return recs, nil
}

// Events returns the events matching q, newest first.
func (s Store) Events(ctx context.Context, q index.EventQuery) ([]index.Event, error) {
	var cur *int64
	if q.Before != 0 {
		var t int64
		err := s.Q.QueryRow(ctx, `SELECT time_ns FROM events WHERE id = $1`, q.Before).Scan(&t)
		if errors.Is(err, ErrNoRows) {
			return nil, fmt.Errorf("index: events: cursor %d: %w", q.Before, index.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("index: events: %w", err)
		}
		cur = &t
	}
	text, args := EventsSQL(&q, cur)
	return query(ctx, s.Q, "events", ScanEvent, text, args...)
}

// Stats counts records by bucket and the fields of index.StatsRow.
func (s Store) Stats(ctx context.Context, q index.StatsQuery) ([]index.StatsRow, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return query(ctx, s.Q, "stats", ScanStats, StatsSQL(s.Dialect), q.Since.UnixNano(), q.Until.UnixNano(), q.Width())
}

// Breakdown counts the records of q's window by q.By, verdict and canary.
func (s Store) Breakdown(ctx context.Context, q index.BreakdownQuery) ([]index.BreakdownRow, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return query(ctx, s.Q, "breakdown", ScanBreakdown, BreakdownSQL(s.Dialect, q.By), q.Since.UnixNano(), q.Until.UnixNano())
}

// MaxLeafIndex returns the greatest leaf index stored for shard, or -1.
func (s Store) MaxLeafIndex(ctx context.Context, shard string) (int64, error) {
	var n int64
	if err := s.Q.QueryRow(ctx, `SELECT COALESCE(MAX(leaf_index), -1) FROM records WHERE shard = $1`, shard).Scan(&n); err != nil {
		return 0, fmt.Errorf("index: max leaf index of %q: %w", shard, err)
	}
	return n, nil
}

// RegisterShard adds sh or updates the shard with its origin.
func (s Store) RegisterShard(ctx context.Context, sh index.Shard) error {
	if err := sh.Validate(); err != nil {
		return err
	}
	if _, err := s.Q.Exec(ctx, RegisterShardSQL, sh.Origin, index.Column(sh.URL), index.Column(sh.VerifierKey)); err != nil {
		return fmt.Errorf("index: registering shard %q: %w", sh.Origin, err)
	}
	return nil
}

// Shards returns every shard, ordered by origin.
func (s Store) Shards(ctx context.Context) ([]index.Shard, error) {
	return query(ctx, s.Q, "shards", ScanShard, ShardsSQL)
}

// ClaimResponse records that key was delivered to requestID and returns
// the first claimant within ttl: one statement (ClaimSQL), judged by this
// replica's clock; replicas' clocks need only agree to well within a ttl.
func (s Store) ClaimResponse(ctx context.Context, key, requestID string, ttl time.Duration) (string, error) {
	if key == "" || requestID == "" || ttl <= 0 {
		return "", fmt.Errorf("index: claim: want a key, a request id and a positive ttl: %w", custody.ErrInvalidRequest)
	}
	now := time.Now().UnixNano()
	var holder string
	if err := s.Q.QueryRow(ctx, ClaimSQL, []byte(key), requestID, now+int64(ttl), now).Scan(&holder); err != nil {
		return "", fmt.Errorf("index: claim: %w", err)
	}
	s.Pruner.Tick(func(ctx context.Context) error { _, err := s.PruneClaims(ctx); return err })
	return holder, nil
}

// PruneClaims deletes the expired claims.
func (s Store) PruneClaims(ctx context.Context) (int64, error) {
	n, err := s.Q.Exec(ctx, PruneClaimsSQL, time.Now().UnixNano())
	if err != nil {
		return 0, fmt.Errorf("index: pruning claims: %w", err)
	}
	return n, nil
}

func query[T any](ctx context.Context, q Querier, what string, scan func(Row) (T, error), text string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	if c, ok := rows.(Closer); ok {
		defer c.Close()
	}
	return Collect(rows, what, scan)
}
