package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/custody-gateway/custody/index"
)

// A Put is three set-based statements, whatever the batch size, sent as
// one pgx.Batch: one round trip, run by postgres as one implicit
// transaction. The upsert keeps the stored record when its leaf index is
// greater; the term statements then act only on the records whose stored
// leaf index is now their own, which is exactly the records the upsert
// wrote.
const (
	upsertSQL = `INSERT INTO records (request_id, tenant, time_ns, requested_model, response_model, provider, verdict, code, shard, leaf_index, data)
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[])
ON CONFLICT (request_id) DO UPDATE SET
	tenant = excluded.tenant, time_ns = excluded.time_ns, requested_model = excluded.requested_model,
	response_model = excluded.response_model, provider = excluded.provider, verdict = excluded.verdict,
	code = excluded.code, shard = excluded.shard, leaf_index = excluded.leaf_index, data = excluded.data
WHERE excluded.leaf_index >= records.leaf_index`

	deleteTermsSQL = `DELETE FROM record_terms c
USING unnest($1::text[], $2::bigint[]) AS u(id, li), records r
WHERE c.request_id = u.id AND r.request_id = u.id AND r.leaf_index = u.li`

	insertTermsSQL = `INSERT INTO record_terms (term, request_id, time_ns)
SELECT u.term, u.id, u.t FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS u(id, term, t, li)
JOIN records r ON r.request_id = u.id AND r.leaf_index = u.li`
)

// Put stores recs in one transaction and one round trip.
func (x *Index) Put(ctx context.Context, recs ...index.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := index.Validate(recs); err != nil {
		return err
	}
	recs = winners(recs)
	n := len(recs)
	var (
		id, tenant, reqModel, respModel = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		provider, verdict, code, shard  = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		data                            = make([]string, n)
		t, leaf                         = make([]int64, n), make([]int64, n)
		cID, cTerm                      []string
		cT, cLeaf                       []int64
	)
	for i := range recs {
		r := &recs[i]
		b, err := index.EncodeTransactionString(&r.Transaction)
		if err != nil {
			return err
		}
		id[i], tenant[i], t[i] = r.ID, index.Column(r.Tenant), r.Time.UnixNano()
		reqModel[i], respModel[i], provider[i] = index.Column(r.RequestedModel), index.Column(r.ResponseModel), index.Column(r.Provider)
		verdict[i], code[i], shard[i] = index.Column(string(r.Verdict)), index.Column(string(r.Code)), index.Column(r.Shard)
		leaf[i], data[i] = r.LeafIndex, b
		for _, term := range index.Terms(&r.Transaction) {
			cID, cTerm, cT, cLeaf = append(cID, r.ID), append(cTerm, term), append(cT, t[i]), append(cLeaf, r.LeafIndex)
		}
	}
	b := &pgx.Batch{}
	b.Queue(upsertSQL, id, tenant, t, reqModel, respModel, provider, verdict, code, shard, leaf, data)
	b.Queue(deleteTermsSQL, id, leaf)
	b.Queue(insertTermsSQL, cID, cTerm, cT, cLeaf)
	if err := x.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("index: put: %w", err)
	}
	return nil
}

// winners reduces recs to one record per request id, the one Put keeps:
// the greatest leaf index, the later of equals. (An upsert statement may
// not touch a row twice.) They come sorted by id, so that concurrent Puts
// lock rows in one order and cannot deadlock.
func winners(recs []index.Record) []index.Record {
	idx := make([]int, len(recs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(recs[a].ID, recs[b].ID) })
	out := make([]index.Record, 0, len(recs))
	for _, i := range idx {
		r := recs[i]
		if k := len(out) - 1; k >= 0 && out[k].ID == r.ID {
			if r.LeafIndex >= out[k].LeafIndex {
				out[k] = r
			}
			continue
		}
		out = append(out, r)
	}
	return out
}
