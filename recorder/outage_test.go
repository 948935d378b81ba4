package recorder

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger/ledgertest"
)

// flakyIndex is an index whose writes fail while down, as an unreachable
// PostgreSQL's do.
type flakyIndex struct {
	index.Index
	down atomic.Bool
}

var errDown = errors.New("index unreachable")

func (f *flakyIndex) Put(ctx context.Context, recs ...index.Record) error {
	if f.down.Load() {
		return errDown
	}
	return f.Index.Put(ctx, recs...)
}

func (f *flakyIndex) AddEvents(ctx context.Context, evs ...index.Event) error {
	if f.down.Load() {
		return errDown
	}
	return f.Index.AddEvents(ctx, evs...)
}

// TestEventsOfAnOutageReachTheIndex: a violation recorded while the index
// does not answer is durable in the log; when the index is back,
// reconciliation adds its record and its event, once.
func TestEventsOfAnOutageReachTheIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a reconciliation tick")
	}
	ctx := t.Context()
	dir := t.TempDir()
	l, err := ledgertest.Open(ctx, filepath.Join(dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	sq, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	idx := &flakyIndex{Index: sq}
	r, err := New(ctx, Config{Log: l, Index: idx, TenantIDs: []string{"acme"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)

	idx.down.Store(true)
	tx := ledgertest.SampleTx(l, "req-during", nil, nil)
	tx.Outcomes = nil
	tx.Fail(custody.CheckModel, custody.CodeModelMismatch, "")
	if err := r.Record(ctx, tx); err != nil {
		t.Fatalf("recording during the outage: %v", err)
	}
	waitFor(t, 5*time.Second, func() bool { return !r.Pending("req-during") }, "the failed index write")
	idx.down.Store(false)

	var evs []index.Event
	waitFor(t, 20*time.Second, func() bool {
		evs, err = sq.Events(ctx, index.EventQuery{Type: index.EventViolation})
		return err == nil && len(evs) > 0
	}, "the outage's violation event")
	if len(evs) != 1 || evs[0].RequestID != "req-during" || evs[0].Code != custody.CodeModelMismatch || evs[0].Tenant != "acme" {
		t.Errorf("events after the outage: %+v", evs)
	}
	if rec, err := sq.Get(ctx, "req-during"); err != nil || rec.Code != custody.CodeModelMismatch {
		t.Errorf("the outage's record: %+v, %v", rec, err)
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}
