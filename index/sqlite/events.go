package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/custody-gateway/custody/index"
)

// AddEvents appends evs in one transaction.
func (x *Index) AddEvents(ctx context.Context, evs ...index.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := index.Validate(evs); err != nil {
		return err
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: add events: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO events (time_ns, type, request_id, tenant, model, provider, route, code, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`)
	if err != nil {
		return fmt.Errorf("index: add events: %w", err)
	}
	defer st.Close()
	now := time.Now()
	for _, e := range evs {
		if e.Time.IsZero() {
			e.Time = now
		}
		if _, err := st.ExecContext(ctx, e.Time.UnixNano(), index.Column(e.Type), index.Column(e.RequestID), index.Column(e.Tenant),
			index.Column(e.Model), index.Column(e.Provider), index.Column(e.Route), index.Column(string(e.Code)), index.Column(e.Detail)); err != nil {
			return fmt.Errorf("index: add events: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: add events: %w", err)
	}
	return nil
}
