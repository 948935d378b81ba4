package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/internal/sqlq"
	"github.com/custody-gateway/custody/internal/background"
)

// insertHead and insertTail frame a multi-row insert that skips the ids
// already stored and returns the ones it wrote; Put replaces the skipped
// ones apart (replace), which nearly no batch has.
const insertHead = `INSERT INTO records (request_id, tenant, time_ns, requested_model, response_model, provider, verdict, code, shard, leaf_index, data, route, fallback, canary) VALUES `

const insertTail = `
ON CONFLICT (request_id) DO NOTHING
RETURNING request_id`

// The statements of replace and of the leaf heads, prepared once.
const (
	storedSQL = `SELECT time_ns, data, shard, leaf_index FROM records WHERE request_id = ?`
	updateSQL = `UPDATE records SET tenant = ?, time_ns = ?, requested_model = ?, response_model = ?, provider = ?,
	verdict = ?, code = ?, shard = ?, leaf_index = ?, data = ?, route = ?, fallback = ?, canary = ? WHERE request_id = ?`
	deleteTermSQL = `DELETE FROM record_terms WHERE term = ? AND time_ns = ? AND request_id = ?`
	raiseHeadSQL  = `INSERT INTO leaf_heads (shard, leaf_index) VALUES (?, ?)
ON CONFLICT (shard) DO UPDATE SET leaf_index = excluded.leaf_index WHERE excluded.leaf_index > leaf_heads.leaf_index`
	maxLeafSQL = `SELECT leaf_index FROM leaf_heads WHERE shard = ?`
)

// columns is the number of a record's columns, the variables of one row.
const columns = 14

// putChunk bounds the records of one multi-row statement (14 variables
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
	insert *sql.Stmt // n records, RETURNING the request ids written
	terms  *sql.Stmt // n term rows
}

// oneStmts are the write path's statements of one row each.
type oneStmts struct {
	stored, update, deleteTerm, raiseHead, maxLeaf *sql.Stmt
}

func insertSQL(n int) string {
	return insertHead + strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?,?,?,?),", n), ",") + insertTail
}

func insertTermsSQL(n int) string {
	return "INSERT OR IGNORE INTO record_terms (term, request_id, time_ns) VALUES " + strings.TrimSuffix(strings.Repeat("(?,?,?),", n), ",")
}

// preparePut prepares every shape on the writer connection.
func (x *Index) preparePut(ctx context.Context) error {
	prep := func(dst **sql.Stmt, q string) error {
		st, err := x.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("preparing the write path: %w", err)
		}
		*dst = st
		return nil
	}
	x.put = map[int]*putStmts{}
	for _, n := range putShapes {
		ps := &putStmts{}
		x.put[n] = ps
		if err := prep(&ps.insert, insertSQL(n)); err != nil {
			return err
		}
		if err := prep(&ps.terms, insertTermsSQL(n)); err != nil {
			return err
		}
	}
	o := &x.one
	for _, s := range []struct {
		dst **sql.Stmt
		q   string
	}{{&o.stored, storedSQL}, {&o.update, updateSQL}, {&o.deleteTerm, deleteTermSQL}, {&o.raiseHead, raiseHeadSQL}, {&o.maxLeaf, maxLeafSQL}} {
		if err := prep(s.dst, s.q); err != nil {
			return err
		}
	}
	return nil
}

// closePut closes what preparePut prepared.
func (x *Index) closePut() {
	sts := []*sql.Stmt{x.one.stored, x.one.update, x.one.deleteTerm, x.one.raiseHead, x.one.maxLeaf}
	for _, ps := range x.put {
		sts = append(sts, ps.insert, ps.terms)
	}
	for _, st := range sts {
		if st != nil {
			st.Close()
		}
	}
}

// runs calls f with consecutive runs of rows (each of putShapes' sizes,
// greatest first) covering 0..n, stopping at the first error. It yields
// the processor after each run: the index is written in the background,
// and with one P (GOMAXPROCS=1) a batch's statements back to back would
// hold it for milliseconds while the requests that became runnable wait
// (TestPutYields), and, with runtime.Gosched for a yield, those whose
// network wait ended (a request's bytes, the journal's fsync completion)
// until the runtime's monitor polled, 10 ms later (TestPutLetsTheNetworkIn).
// A yield costs a few microseconds of CPU (and, with one P and nothing
// else to run, 20 µs or more of waiting: background.Pause).
func runs(n int, f func(lo, size int) error) error {
	lo := 0
	for _, size := range putShapes {
		for n-lo >= size {
			if err := f(lo, size); err != nil {
				return err
			}
			lo += size
			background.Yield()
		}
	}
	return nil
}

// Put stores recs in one transaction on the writer connection. Each run
// of records is one multi-row insert and one multi-row insert of their
// terms, all prepared: per-statement overhead, not rows, dominated the
// cost. A record whose id is stored already replaces the stored one
// unless that has the greater leaf index (replace); its shard's leaf
// head rises to the greatest leaf index written.
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
	heads := map[string]int64{}
	for len(recs) > 0 {
		n := min(len(recs), putChunk)
		if err := x.putChunkTx(ctx, tx, recs[:n], heads); err != nil {
			return err
		}
		recs = recs[n:]
	}
	for shard, leaf := range heads {
		if _, err := tx.StmtContext(ctx, x.one.raiseHead).ExecContext(ctx, shard, leaf); err != nil {
			return fmt.Errorf("index: put: %w", err)
		}
	}
	background.Yield()
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	return nil
}

// putChunkTx stores recs in tx and raises heads, by shard, to the
// greatest leaf index it wrote.
func (x *Index) putChunkTx(ctx context.Context, tx *sql.Tx, recs []index.Record, heads map[string]int64) error {
	// Within one statement a request id may appear once: keep, as a run
	// of single upserts would, the greatest leaf index, later winning ties.
	last := make(map[string]int, len(recs))
	for i := range recs {
		if j, ok := last[recs[i].ID]; !ok || recs[i].LeafIndex >= recs[j].LeafIndex {
			last[recs[i].ID] = i
		}
	}
	args := make([]any, 0, columns*len(last))
	kept := make([]*index.Record, 0, len(last))
	for i := range recs {
		r := &recs[i]
		if last[r.ID] != i {
			continue
		}
		data, err := x.data(r)
		if err != nil {
			return err
		}
		kept = append(kept, r)
		args = append(args, r.ID, index.Column(r.Tenant), r.Time.UnixNano(),
			index.Column(r.RequestedModel), index.Column(r.ResponseModel), index.Column(r.Provider),
			index.Column(string(r.Verdict)), index.Column(string(r.Code)), index.Column(r.Shard), r.LeafIndex, data,
			r.Route, len(r.FallbackChain) > 1 && r.Status == 200, r.Canary)
	}
	inserted := make(map[string]bool, len(kept))
	err := runs(len(kept), func(lo, n int) error {
		rows, err := tx.StmtContext(ctx, x.put[n].insert).QueryContext(ctx, args[columns*lo:columns*(lo+n)]...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			inserted[id] = true
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	var iargs []any
	for i, r := range kept {
		if !inserted[r.ID] {
			ok, err := x.replace(ctx, tx, args[columns*i:columns*(i+1)])
			if err != nil {
				return fmt.Errorf("index: put: replacing %q: %w", r.ID, err)
			}
			if !ok {
				continue
			}
		}
		for _, term := range index.Terms(&r.Transaction) {
			iargs = append(iargs, term, r.ID, r.Time.UnixNano())
		}
		if h, ok := heads[r.Shard]; r.LeafIndex >= 0 && (!ok || r.LeafIndex > h) {
			heads[r.Shard] = r.LeafIndex
		}
	}
	err = runs(len(iargs)/3, func(lo, n int) error {
		_, err := tx.StmtContext(ctx, x.put[n].terms).ExecContext(ctx, iargs[3*lo:3*(lo+n)]...)
		return err
	})
	if err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	return nil
}

// replace writes the record of row (its insert's variables, id first)
// over the stored one of its id unless that has the greater leaf index,
// and reports whether it did. The stored record's terms go with it: they
// derive from its data, and the key they are deleted by is whole
// (record_terms has no index by request id to find them otherwise).
func (x *Index) replace(ctx context.Context, tx *sql.Tx, row []any) (bool, error) {
	id, leaf := row[0].(string), row[9].(int64)
	var (
		timeNS, storedLeaf int64
		data, shard        string
	)
	if err := tx.StmtContext(ctx, x.one.stored).QueryRowContext(ctx, id).Scan(&timeNS, &data, &shard, &storedLeaf); err != nil {
		return false, err
	}
	if storedLeaf > leaf {
		return false, nil
	}
	stored, err := x.stored(ctx, id, data, shard, storedLeaf)
	if err != nil {
		return false, err
	}
	for _, term := range index.Terms(&stored.Transaction) {
		if _, err := tx.StmtContext(ctx, x.one.deleteTerm).ExecContext(ctx, term, timeNS, id); err != nil {
			return false, err
		}
	}
	if _, err := tx.StmtContext(ctx, x.one.update).ExecContext(ctx, append(row[1:columns:columns], id)...); err != nil {
		return false, err
	}
	return true, nil
}

// MaxLeafIndex returns the greatest leaf index stored for shard, or -1:
// its leaf head, which Put raises.
func (x *Index) MaxLeafIndex(ctx context.Context, shard string) (int64, error) {
	var n int64
	switch err := x.one.maxLeaf.QueryRowContext(ctx, shard).Scan(&n); {
	case errors.Is(err, sql.ErrNoRows):
		return -1, nil
	case err != nil:
		return 0, fmt.Errorf("index: max leaf index of %q: %w", shard, err)
	}
	return n, nil
}

// data is what Put stores of r's transaction: nothing ("") when its leaf
// is durable in the log the index reads, else its JSON.
func (x *Index) data(r *index.Record) (string, error) {
	if l := x.Leaves; l != nil && r.LeafIndex >= 0 && r.Shard == l.Origin() && l.Has(uint64(r.LeafIndex)) {
		return "", nil
	}
	return index.EncodeTransactionString(&r.Transaction)
}

// stored is the record of a row replace read (its tenant left out: the
// terms do not need it).
func (x *Index) stored(ctx context.Context, id, data, shard string, leaf int64) (index.Record, error) {
	if data != "" {
		return index.DecodeRecord([]byte(data), shard, leaf)
	}
	recs, err := x.FromLog(ctx, []sqlq.Stored{{Record: index.Record{Transaction: custody.Transaction{ID: id}, Shard: shard, LeafIndex: leaf}, InLog: true}})
	if err != nil {
		return index.Record{}, err
	}
	return recs[0], nil
}
