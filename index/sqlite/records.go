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

// Put stores recs in one transaction on the writer connection. Each chunk
// of records is one multi-row upsert, one delete and one multi-row insert
// of their terms: per-statement overhead, not rows, dominated the cost.
// A record whose stored copy has the greater leaf index keeps it (the
// upsert's WHERE); its terms are rewritten all the same, which changes
// nothing, since a request's terms derive from its immutable leaf.
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
		if err := putChunkTx(ctx, tx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	return nil
}

func putChunkTx(ctx context.Context, tx *sql.Tx, recs []index.Record) error {
	// Within one statement a request id may appear once: keep, as a run
	// of single upserts would, the greatest leaf index, later winning ties.
	last := make(map[string]int, len(recs))
	for i := range recs {
		if j, ok := last[recs[i].ID]; !ok || recs[i].LeafIndex >= recs[j].LeafIndex {
			last[recs[i].ID] = i
		}
	}
	var up strings.Builder
	args := make([]any, 0, 11*len(last))
	up.WriteString(upsertHead)
	n := 0
	for i := range recs {
		r := &recs[i]
		if last[r.ID] != i {
			continue
		}
		data, err := index.EncodeTransaction(&r.Transaction)
		if err != nil {
			return err
		}
		if n > 0 {
			up.WriteByte(',')
		}
		n++
		up.WriteString("(?,?,?,?,?,?,?,?,?,?,?)")
		args = append(args, r.ID, index.Column(r.Tenant), r.Time.UnixNano(),
			index.Column(r.RequestedModel), index.Column(r.ResponseModel), index.Column(r.Provider),
			index.Column(string(r.Verdict)), index.Column(string(r.Code)), index.Column(r.Shard), r.LeafIndex, string(data))
	}
	up.WriteString(upsertTail)
	// The upsert returns the records it wrote: a stored copy with a
	// greater leaf index keeps its row, and its terms.
	rows, err := tx.QueryContext(ctx, up.String(), args...)
	if err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	var written []*index.Record
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("index: put: %w", err)
		}
		written = append(written, &recs[last[id]])
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	if len(written) == 0 {
		return nil
	}
	var del, ins strings.Builder
	dargs := make([]any, 0, len(written))
	var iargs []any
	del.WriteString("DELETE FROM record_terms WHERE request_id IN (")
	ins.WriteString("INSERT OR IGNORE INTO record_terms (term, request_id, time_ns) VALUES ")
	for i, r := range written {
		if i > 0 {
			del.WriteByte(',')
		}
		del.WriteByte('?')
		dargs = append(dargs, r.ID)
		for _, term := range index.Terms(&r.Transaction) {
			if len(iargs) > 0 {
				ins.WriteByte(',')
			}
			ins.WriteString("(?,?,?)")
			iargs = append(iargs, term, r.ID, r.Time.UnixNano())
		}
	}
	del.WriteByte(')')
	if _, err := tx.ExecContext(ctx, del.String(), dargs...); err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	if len(iargs) > 0 {
		if _, err := tx.ExecContext(ctx, ins.String(), iargs...); err != nil {
			return fmt.Errorf("index: put: %w", err)
		}
	}
	return nil
}
