package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/custody-gateway/custody/index"
)

// addEventsSQL inserts in argument order, so ids follow it.
const addEventsSQL = `INSERT INTO events (time_ns, type, request_id, tenant, model, provider, route, code, detail)
SELECT t, typ, rid, ten, mod, prov, rt, code, det
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
	WITH ORDINALITY AS u(t, typ, rid, ten, mod, prov, rt, code, det, ord)
ORDER BY ord`

// AddEvents appends evs in one statement.
func (x *Index) AddEvents(ctx context.Context, evs ...index.Event) error {
	if len(evs) == 0 {
		return nil
	}
	n := len(evs)
	t := make([]int64, n)
	cols := make([][]string, 8)
	for j := range cols {
		cols[j] = make([]string, n)
	}
	now := time.Now()
	for i := range evs {
		e := &evs[i]
		if err := e.Validate(); err != nil {
			return err
		}
		t[i] = e.Time.UnixNano()
		if e.Time.IsZero() {
			t[i] = now.UnixNano()
		}
		for j, s := range []string{e.Type, e.RequestID, e.Tenant, e.Model, e.Provider, e.Route, string(e.Code), e.Detail} {
			cols[j][i] = index.Column(s)
		}
	}
	if _, err := x.pool.Exec(ctx, addEventsSQL, t, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7]); err != nil {
		return fmt.Errorf("index: add events: %w", err)
	}
	return nil
}
