package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/custody-gateway/custody/index"
)

// upsertHead and upsertTail frame a multi-row upsert that replaces a
// stored record unless the stored one has the greater leaf index.
const upsertHead = `INSERT INTO records (request_id, tenant, time_ns, requested_model, response_model, provider, verdict, code, shard, leaf_index, data) VALUES `

const upsertTail = `
ON CONFLICT (request_id) DO UPDATE SET
	tenant = excluded.tenant, time_ns = excluded.time_ns, requested_model = excluded.requested_model,
	response_model = excluded.response_model, provider = excluded.provider, verdict = excluded.verdict,
	code = excluded.code, shard = excluded.shard, leaf_index = excluded.leaf_index, data = excluded.data
WHERE excluded.leaf_index >= records.leaf_index
RETURNING request_id`

// putChunk bounds the records of one multi-row statement (11 variables
// each, far under SQLite's limit of 32,766).
const putChunk = 256

// The write path's statements have a few fixed shapes, prepared once at
// Open: a batch of n rows is cut into runs of putShapes' sizes (greatest
// first), so that no Put parses and plans SQL. A statement text per n
// would cost, at the batch sizes the recorder's linger collects (tens),
// a fifth of the write path's CPU in sqlite3_prepare alone.
var putShapes = []int{256, 64, 16, 4, 1}

// putStmts are the prepared statements of one row count.
type putStmts struct {
	upsert *sql.Stmt // n records, RETURNING the request ids written
	del    *sql.Stmt // the terms of n request ids
	terms  *sql.Stmt // n term rows
}

func upsertSQL(n int) string {
	return upsertHead + strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?),", n), ",") + upsertTail
}

func deleteTermsSQL(n int) string {
	return "DELETE FROM record_terms WHERE request_id IN (" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

func insertTermsSQL(n int) string {
	return "INSERT OR IGNORE INTO record_terms (term, request_id, time_ns) VALUES " + strings.TrimSuffix(strings.Repeat("(?,?,?),", n), ",")
}

// preparePut prepares every shape on the writer connection.
func (x *Index) preparePut(ctx context.Context) error {
	x.put = map[int]*putStmts{}
	for _, n := range putShapes {
		var ps putStmts
		for _, s := range []struct {
			dst **sql.Stmt
			sql string
		}{{&ps.upsert, upsertSQL(n)}, {&ps.del, deleteTermsSQL(n)}, {&ps.terms, insertTermsSQL(n)}} {
			st, err := x.w.PrepareContext(ctx, s.sql)
			if err != nil {
				return fmt.Errorf("preparing the write path (%d rows): %w", n, err)
			}
			*s.dst = st
		}
		x.put[n] = &ps
	}
	return nil
}

// closePut closes what preparePut prepared.
func (x *Index) closePut() {
	for _, ps := range x.put {
		for _, st := range []*sql.Stmt{ps.upsert, ps.del, ps.terms} {
			if st != nil {
				st.Close()
			}
		}
	}
}

// runs calls f with consecutive runs of rows (each of putShapes' sizes,
// greatest first) covering 0..n, stopping at the first error.
func runs(n int, f func(lo, size int) error) error {
	lo := 0
	for _, size := range putShapes {
		for n-lo >= size {
			if err := f(lo, size); err != nil {
				return err
			}
			lo += size
		}
	}
	return nil
}

// Put stores recs in one transaction on the writer connection. Each run
// of records is one multi-row upsert, one delete and one multi-row insert
// of their terms, all prepared: per-statement overhead, not rows,
// dominated the cost. A record whose stored copy has the greater leaf
// index keeps it (the upsert's WHERE); its terms are rewritten all the
// same, which changes nothing, since a request's terms derive from its
// immutable leaf.
func (x *Index) Put(ctx context.Context, recs ...index.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := index.Validate(recs); err != nil {
		return err
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	defer tx.Rollback()
	for len(recs) > 0 {
		n := min(len(recs), putChunk)
		if err := x.putChunkTx(ctx, tx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	return nil
}

func (x *Index) putChunkTx(ctx context.Context, tx *sql.Tx, recs []index.Record) error {
	// Within one statement a request id may appear once: keep, as a run
	// of single upserts would, the greatest leaf index, later winning ties.
	last := make(map[string]int, len(recs))
	for i := range recs {
		if j, ok := last[recs[i].ID]; !ok || recs[i].LeafIndex >= recs[j].LeafIndex {
			last[recs[i].ID] = i
		}
	}
	args := make([]any, 0, 11*len(last))
	for i := range recs {
		r := &recs[i]
		if last[r.ID] != i {
			continue
		}
		data, err := index.EncodeTransaction(&r.Transaction)
		if err != nil {
			return err
		}
		args = append(args, r.ID, index.Column(r.Tenant), r.Time.UnixNano(),
			index.Column(r.RequestedModel), index.Column(r.ResponseModel), index.Column(r.Provider),
			index.Column(string(r.Verdict)), index.Column(string(r.Code)), index.Column(r.Shard), r.LeafIndex, string(data))
	}
	// The upsert returns the records it wrote: a stored copy with a
	// greater leaf index keeps its row, and its terms.
	var written []*index.Record
	err := runs(len(args)/11, func(lo, n int) error {
		rows, err := tx.StmtContext(ctx, x.put[n].upsert).QueryContext(ctx, args[11*lo:11*(lo+n)]...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			written = append(written, &recs[last[id]])
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	if len(written) == 0 {
		return nil
	}
	dargs := make([]any, 0, len(written))
	var iargs []any
	for _, r := range written {
		dargs = append(dargs, r.ID)
		for _, term := range index.Terms(&r.Transaction) {
			iargs = append(iargs, term, r.ID, r.Time.UnixNano())
		}
	}
	err = runs(len(dargs), func(lo, n int) error {
		_, err := tx.StmtContext(ctx, x.put[n].del).ExecContext(ctx, dargs[lo:lo+n]...)
		return err
	})
	if err == nil {
		err = runs(len(iargs)/3, func(lo, n int) error {
			_, err := tx.StmtContext(ctx, x.put[n].terms).ExecContext(ctx, iargs[3*lo:3*(lo+n)]...)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	return nil
}
