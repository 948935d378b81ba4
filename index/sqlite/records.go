package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/sqlq"
)

// upsertSQL replaces a stored record unless the stored one has the
// greater leaf index; it changes no row (RowsAffected 0) when the stored
// one wins, and then the terms are left alone too.
const upsertSQL = `INSERT INTO records (request_id, tenant, time_ns, requested_model, response_model, provider, verdict, code, shard, leaf_index, data)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (request_id) DO UPDATE SET
	tenant = excluded.tenant, time_ns = excluded.time_ns, requested_model = excluded.requested_model,
	response_model = excluded.response_model, provider = excluded.provider, verdict = excluded.verdict,
	code = excluded.code, shard = excluded.shard, leaf_index = excluded.leaf_index, data = excluded.data
WHERE excluded.leaf_index >= records.leaf_index`

const deleteTermsSQL = `DELETE FROM record_terms WHERE request_id = $1`

const insertTermSQL = `INSERT INTO record_terms (term, request_id, time_ns) VALUES ($1, $2, $3)`

// Put stores recs in one transaction on the writer connection.
func (x *Index) Put(ctx context.Context, recs ...index.Record) error {
	if len(recs) == 0 {
		return nil
	}
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return err
		}
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	defer tx.Rollback()
	upsert, del, ins := tx.StmtContext(ctx, x.upsert), tx.StmtContext(ctx, x.deleteTerms), tx.StmtContext(ctx, x.insertTerm)
	for i := range recs {
		r := &recs[i]
		data, err := index.EncodeTransaction(&r.Transaction)
		if err != nil {
			return err
		}
		t := r.Time.UnixNano()
		res, err := upsert.ExecContext(ctx, r.ID, index.Column(r.Tenant), t,
			index.Column(r.RequestedModel), index.Column(r.ResponseModel), index.Column(r.Provider),
			index.Column(string(r.Verdict)), index.Column(string(r.Code)), index.Column(r.Shard), r.LeafIndex, string(data))
		if err != nil {
			return fmt.Errorf("index: put %q: %w", r.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("index: put %q: %w", r.ID, err)
		} else if n == 0 {
			continue // the stored record has a greater leaf index
		}
		if _, err := del.ExecContext(ctx, r.ID); err != nil {
			return fmt.Errorf("index: put %q: %w", r.ID, err)
		}
		for _, term := range index.Terms(&r.Transaction) {
			if _, err := ins.ExecContext(ctx, term, r.ID, t); err != nil {
				return fmt.Errorf("index: put %q: %w", r.ID, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	return nil
}

// Get returns the record of requestID.
func (x *Index) Get(ctx context.Context, requestID string) (index.Record, error) {
	var (
		data  string
		shard string
		leaf  int64
	)
	err := x.r.QueryRowContext(ctx, `SELECT data, shard, leaf_index FROM records WHERE request_id = $1`, requestID).Scan(&data, &shard, &leaf)
	if errors.Is(err, sql.ErrNoRows) {
		return index.Record{}, fmt.Errorf("index: request %q: %w", requestID, index.ErrNotFound)
	}
	if err != nil {
		return index.Record{}, fmt.Errorf("index: get %q: %w", requestID, err)
	}
	return index.DecodeRecord([]byte(data), shard, leaf)
}

// Search returns the records matching q, newest first.
func (x *Index) Search(ctx context.Context, q index.Query) ([]index.Record, error) {
	var cur *sqlq.Cursor
	if q.Before != "" {
		c := sqlq.Cursor{RequestID: q.Before}
		err := x.r.QueryRowContext(ctx, sqlq.CursorSQL, q.Before).Scan(&c.TimeNS)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("index: search: cursor %q: %w", q.Before, index.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		cur = &c
	}
	text, args := sqlq.Search(&q, cur)
	rows, err := x.r.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	defer rows.Close()
	var out []index.Record
	for rows.Next() {
		var (
			data  string
			shard string
			leaf  int64
		)
		if err := rows.Scan(&data, &shard, &leaf); err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		r, err := index.DecodeRecord([]byte(data), shard, leaf)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	return out, nil
}

// MaxLeafIndex returns the greatest leaf index stored for shard, or -1.
func (x *Index) MaxLeafIndex(ctx context.Context, shard string) (int64, error) {
	var n int64
	if err := x.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(leaf_index), -1) FROM records WHERE shard = $1`, shard).Scan(&n); err != nil {
		return 0, fmt.Errorf("index: max leaf index of %q: %w", shard, err)
	}
	return n, nil
}
