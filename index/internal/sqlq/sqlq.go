// Package sqlq builds the SQL that the index backends share. Parameters
// are written $1, $2...: postgres's form, which sqlite (and the
// modernc.org/sqlite driver) also binds by number, so one text serves both.
package sqlq

import (
	"strconv"
	"strings"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// Cursor is the position of Query.Before: the record's time and id.
type Cursor struct {
	TimeNS    int64
	RequestID string
}

// CursorSQL selects the time of a request id, to resolve Query.Before.
const CursorSQL = "SELECT time_ns FROM records WHERE request_id = $1"

// RecordColumns are the columns Search selects, for ScanRecord.
const RecordColumns = "r.request_id, r.tenant, r.data, r.shard, r.leaf_index"

type builder struct {
	where []string
	args  []any
}

func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// SearchSQL builds the query of q; cursor is nil unless q.Before is set.
// Records are ordered newest first by (time_ns, request_id); with a Code
// or a Model, the time and order come from record_terms, whose (term,
// time_ns, request_id) key then drives the query without a sort.
func SearchSQL(d Dialect, q *index.Query, cursor *Cursor) (string, []any) {
	b := &builder{}
	var s strings.Builder
	s.WriteString("SELECT " + RecordColumns + " FROM records r")
	t := "r" // the table whose time_ns and request_id order the result
	if q.Code != "" {
		s.WriteString(" JOIN record_terms c ON c.request_id = r.request_id AND c.term = " + b.arg(index.CodeTerm(q.Code)))
		t = "c"
	}
	if q.Model != "" {
		// The time too: with a Code as well, each record is then one
		// lookup of record_terms' whole key, which a backend without an
		// index of the terms by request id (sqlite) needs.
		s.WriteString(" JOIN record_terms m ON m.request_id = r.request_id AND m.time_ns = r.time_ns AND m.term = " + b.arg(index.ModelTerm(q.Model)))
		if t == "r" {
			t = "m"
		}
	}
	// An eval's record has an sender term; a canary probe's is canary
	// traffic without one (sqlq's Dialect.Canary reads records' columns).
	senderTerm := func() string {
		return "SELECT 1 FROM record_terms o WHERE o.request_id = r.request_id AND o.time_ns = r.time_ns AND o.term = " + b.arg(index.SenderTerm(custody.SenderEval))
	}
	switch q.Sender {
	case "":
	case custody.SenderClient:
		b.where = append(b.where, "NOT "+d.Canary)
	case custody.SenderCanary:
		b.where = append(b.where, d.Canary, "NOT EXISTS ("+senderTerm()+")")
	case custody.SenderEval:
		b.where = append(b.where, "EXISTS ("+senderTerm()+")")
	default:
		b.where = append(b.where, "1 = 0")
	}
	if q.RequestID != "" {
		b.where = append(b.where, "r.request_id = "+b.arg(index.Column(q.RequestID)))
	}
	if q.Tenant != "" {
		b.where = append(b.where, "r.tenant = "+b.arg(index.Column(q.Tenant)))
	}
	if q.Provider != "" {
		b.where = append(b.where, "r.provider = "+b.arg(index.Column(q.Provider)))
	}
	if q.Verdict != "" {
		b.where = append(b.where, "r.verdict = "+b.arg(index.Column(string(q.Verdict))))
		if q.Verdict != custody.Verified {
			// Implied already; written out so that SQLite's planner, which
			// cannot see through a bound value, may use its partial index
			// of the unverified records (sqlite migration 005).
			b.where = append(b.where, "r.verdict <> 'verified'")
		}
	}
	if !q.Since.IsZero() {
		b.where = append(b.where, t+".time_ns >= "+b.arg(q.Since.UnixNano()))
	}
	if !q.Until.IsZero() {
		b.where = append(b.where, t+".time_ns < "+b.arg(q.Until.UnixNano()))
	}
	if cursor != nil {
		ts, id := b.arg(cursor.TimeNS), b.arg(cursor.RequestID)
		b.where = append(b.where, "("+t+".time_ns < "+ts+" OR ("+t+".time_ns = "+ts+" AND "+t+".request_id < "+id+"))")
	}
	if len(b.where) > 0 {
		s.WriteString(" WHERE " + strings.Join(b.where, " AND "))
	}
	s.WriteString(" ORDER BY " + t + ".time_ns DESC, " + t + ".request_id DESC LIMIT " + b.arg(q.PageSize()))
	return s.String(), b.args
}

// EventColumns are the columns Events selects, in Event field order.
const EventColumns = "id, time_ns, type, request_id, tenant, model, provider, route, code, detail"

// EventsSQL builds the query of q, newest first by (time_ns, id); cursor
// is the time of the event q.Before names, nil without one.
func EventsSQL(q *index.EventQuery, cursor *int64) (string, []any) {
	b := &builder{}
	var s strings.Builder
	s.WriteString("SELECT " + EventColumns + " FROM events")
	for _, f := range []struct{ col, v string }{
		{"type", q.Type}, {"model", q.Model}, {"tenant", q.Tenant}, {"route", q.Route}, {"code", string(q.Code)},
	} {
		if f.v != "" {
			b.where = append(b.where, f.col+" = "+b.arg(index.Column(f.v)))
		}
	}
	if !q.Since.IsZero() {
		b.where = append(b.where, "time_ns >= "+b.arg(q.Since.UnixNano()))
	}
	if !q.Until.IsZero() {
		b.where = append(b.where, "time_ns < "+b.arg(q.Until.UnixNano()))
	}
	if cursor != nil {
		ts, id := b.arg(*cursor), b.arg(q.Before)
		b.where = append(b.where, "(time_ns < "+ts+" OR (time_ns = "+ts+" AND id < "+id+"))")
	}
	if len(b.where) > 0 {
		s.WriteString(" WHERE " + strings.Join(b.where, " AND "))
	}
	s.WriteString(" ORDER BY time_ns DESC, id DESC LIMIT " + b.arg(q.PageSize()))
	return s.String(), b.args
}

// StatsSQL groups the records of [$1, $2) by bucket ($3 wide) and the
// fields of index.StatsRow; d says where a backend keeps the route,
// whether a fallback served and canary.
func StatsSQL(d Dialect) string {
	return `SELECT CAST((time_ns - $1) / $3 AS INTEGER) AS bucket, requested_model, ` + d.Route + ` AS route, provider,
	response_model, verdict, code, ` + d.Fallback + ` AS fallback, ` + d.Canary + ` AS canary, ` + isEval(d, "records") + ` AS eval, COUNT(*)
FROM records WHERE time_ns >= $1 AND time_ns < $2
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`
}

// isEval is true for an eval's record of table (records, or its alias):
// synthetic traffic with the sender term (index.Terms). The term is looked
// up for synthetic records only.
func isEval(d Dialect, table string) string {
	return "(" + d.Canary + " AND EXISTS (SELECT 1 FROM record_terms o WHERE o.request_id = " + table + ".request_id AND o.time_ns = " +
		table + ".time_ns AND o.term = '" + index.SenderTerm(custody.SenderEval) + "'))"
}

// BreakdownSQL groups the records of [$1, $2) by the key of by, verdict,
// canary and eval. A code breakdown reads record_terms, so that a record is
// counted under each of its codes and a record without one not at all.
func BreakdownSQL(d Dialect, by string) string {
	from, key, t, table := "records", "", "time_ns", "records"
	switch by {
	case index.ByTenant:
		key = "tenant"
	case index.ByModel:
		key = "requested_model"
	case index.ByRoute:
		key = "requested_model || '/' || provider"
	case index.ByCode:
		from = "record_terms c JOIN records r ON r.request_id = c.request_id AND c.term >= 'code:' AND c.term < 'code;'"
		key, t, table = "SUBSTR(c.term, 6)", "c.time_ns", "r"
	}
	return `SELECT ` + key + ` AS k, verdict, ` + d.Canary + ` AS canary, ` + isEval(d, table) + ` AS eval, COUNT(*)
FROM ` + from + ` WHERE ` + t + ` >= $1 AND ` + t + ` < $2
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`
}

// ClaimSQL takes $1 key, $2 request id, $3 expiry and $4 now (Unix ns).
// A live claim is kept (the update rewrites it with its own values) and an
// expired one is replaced; RETURNING gives the holder either way, so a
// claim is one statement, and the row lock of the upsert makes concurrent
// claims of one key agree on a single winner.
const ClaimSQL = `INSERT INTO claims (claim_key, request_id, expires_ns) VALUES ($1, $2, $3)
ON CONFLICT (claim_key) DO UPDATE SET
	request_id = CASE WHEN claims.expires_ns <= $4 THEN excluded.request_id ELSE claims.request_id END,
	expires_ns = CASE WHEN claims.expires_ns <= $4 THEN excluded.expires_ns ELSE claims.expires_ns END
RETURNING request_id`

// PruneClaimsSQL takes $1 now (Unix ns).
const PruneClaimsSQL = `DELETE FROM claims WHERE expires_ns <= $1`

// RegisterShardSQL takes $1 origin, $2 url, $3 verifier key.
const RegisterShardSQL = `INSERT INTO shards (origin, url, verifier_key) VALUES ($1, $2, $3)
ON CONFLICT (origin) DO UPDATE SET url = excluded.url, verifier_key = excluded.verifier_key`

// ShardsSQL lists the shards.
const ShardsSQL = `SELECT origin, url, verifier_key FROM shards ORDER BY origin`
