package sqlq

import (
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// Rows is what database/sql's and pgx's result sets have in common, so
// both backends scan their rows with the same code. The caller closes
// the rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Collect scans every row of rows with scan; what names the operation in
// errors.
func Collect[T any](rows Rows, what string, scan func(Row) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("index: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	return out, nil
}

// Stored is a record as a row holds it: whole, or, with InLog, only
// where its leaf is (Shard, LeafIndex) with its ID and Tenant, the rest to
// be read from the log (Store.Leaves).
type Stored struct {
	index.Record
	InLog bool
}

// ScanRecord scans the columns request_id, tenant, data, shard,
// leaf_index (RecordColumns). An empty data is a record whose transaction
// is its leaf in the log.
func ScanRecord(r Row) (Stored, error) {
	var (
		id, tenant, data, shard string
		leaf                    int64
	)
	if err := r.Scan(&id, &tenant, &data, &shard, &leaf); err != nil {
		return Stored{}, err
	}
	if data == "" {
		return Stored{Record: index.Record{Transaction: custody.Transaction{ID: id, Tenant: tenant}, Shard: shard, LeafIndex: leaf}, InLog: true}, nil
	}
	rec, err := index.DecodeRecord([]byte(data), shard, leaf)
	return Stored{Record: rec}, err
}

// ScanEvent scans the columns of Events.
func ScanEvent(r Row) (index.Event, error) {
	var (
		e    index.Event
		t    int64
		code string
	)
	if err := r.Scan(&e.ID, &t, &e.Type, &e.RequestID, &e.Tenant, &e.Model, &e.Provider, &e.Route, &code, &e.Detail); err != nil {
		return e, err
	}
	e.Time, e.Code = time.Unix(0, t).UTC(), custody.Code(code)
	return e, nil
}

// ScanShard scans the columns of ShardsSQL.
func ScanShard(r Row) (index.Shard, error) {
	var s index.Shard
	err := r.Scan(&s.Origin, &s.URL, &s.VerifierKey)
	return s, err
}

// ScanStats scans the columns of the backends' stats queries.
func ScanStats(r Row) (index.StatsRow, error) {
	var (
		s             index.StatsRow
		verdict, code string
	)
	if err := r.Scan(&s.Bucket, &s.RequestedModel, &s.Route, &s.Provider, &s.ResponseModel, &verdict, &code, &s.Fallback, &s.Canary, &s.Eval, &s.Count); err != nil {
		return s, err
	}
	s.Verdict, s.Code = custody.Verdict(verdict), custody.Code(code)
	return s, nil
}

// ScanBreakdown scans the columns of BreakdownSQL.
func ScanBreakdown(r Row) (index.BreakdownRow, error) {
	var (
		b       index.BreakdownRow
		verdict string
	)
	if err := r.Scan(&b.Key, &verdict, &b.Canary, &b.Eval, &b.Count); err != nil {
		return b, err
	}
	b.Verdict = custody.Verdict(verdict)
	return b, nil
}
