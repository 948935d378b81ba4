package indextest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

func testEvents(t *testing.T, x index.Index) {
	ctx := t.Context()
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	evs := []index.Event{
		{Time: at(1), Type: index.EventFallback, RequestID: "r1", Tenant: "a", Model: "m1", Provider: "backup", Detail: "primary>backup"},
		{Time: at(2), Type: index.EventViolation, RequestID: "r2", Tenant: "b", Model: "m2", Provider: "p1", Code: custody.CodeModelMismatch, Detail: "m2 not in accept"},
		{Time: at(2), Type: index.EventPathChange, Model: "m2", Provider: "p1", Detail: "fp_new"},
		{Time: at(3), Type: index.EventCanary, Model: "m2", Provider: "p1", Route: "m2/p1", Detail: "needle failed"},
	}
	if err := x.AddEvents(ctx, evs...); err != nil {
		t.Fatalf("AddEvents: %v", err)
	}
	before := time.Now()
	if err := x.AddEvents(ctx, index.Event{Type: index.EventCanary, Detail: "now"}); err != nil {
		t.Fatalf("AddEvents: %v", err)
	}
	if err := x.AddEvents(ctx, index.Event{Detail: "no type"}); err == nil {
		t.Error("AddEvents without a type succeeded")
	}
	if err := x.AddEvents(ctx); err != nil {
		t.Errorf("empty AddEvents: %v", err)
	}

	all, err := x.Events(ctx, index.EventQuery{})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	details := func(es []index.Event) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Detail)
		}
		return out
	}
	// Newest first; the two at(2) in reverse order of insertion.
	want := []string{"now", "needle failed", "fp_new", "m2 not in accept", "primary>backup"}
	if got := details(all); !slices.Equal(got, want) {
		t.Fatalf("Events = %v, want %v", got, want)
	}
	if now := all[0].Time; now.Before(before.Add(-time.Second)) || now.After(time.Now().Add(time.Second)) {
		t.Errorf("zero Time was stored as %v, want about %v", now, before)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID == 0 || all[i].ID == all[i-1].ID {
			t.Errorf("event ids %d, %d: want distinct, non-zero", all[i-1].ID, all[i].ID)
		}
	}
	got := all[3]
	got.ID = 0
	if !got.Time.Equal(evs[1].Time) {
		t.Errorf("Time = %v, want %v", got.Time, evs[1].Time)
	}
	got.Time = evs[1].Time
	if got != evs[1] {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, evs[1])
	}

	tests := []struct {
		name string
		q    index.EventQuery
		want []string
	}{
		{"type", index.EventQuery{Type: index.EventCanary}, []string{"now", "needle failed"}},
		{"type with none", index.EventQuery{Type: "nothing"}, nil},
		{"since is inclusive", index.EventQuery{Since: at(2)}, []string{"now", "needle failed", "fp_new", "m2 not in accept"}},
		{"type and since", index.EventQuery{Type: index.EventViolation, Since: at(2)}, []string{"m2 not in accept"}},
		{"type and later since", index.EventQuery{Type: index.EventViolation, Since: at(2).Add(time.Nanosecond)}, nil},
		{"limit", index.EventQuery{Limit: 2}, []string{"now", "needle failed"}},
		{"until is exclusive", index.EventQuery{Until: at(2)}, []string{"primary>backup"}},
		{"model", index.EventQuery{Model: "m2"}, []string{"needle failed", "fp_new", "m2 not in accept"}},
		{"route", index.EventQuery{Route: "m2/p1"}, []string{"needle failed"}},
		{"tenant", index.EventQuery{Tenant: "a"}, []string{"primary>backup"}},
		{"code", index.EventQuery{Code: custody.CodeModelMismatch}, []string{"m2 not in accept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := x.Events(ctx, tt.q)
			if err != nil {
				t.Fatalf("Events: %v", err)
			}
			if got := details(es); !slices.Equal(got, tt.want) {
				t.Errorf("Events(%+v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

// testEventPaging: pages of events joined are the whole timeline, newest
// first, ties in time split between pages; an unknown cursor is
// ErrNotFound.
func testEventPaging(t *testing.T, x index.Index) {
	ctx := t.Context()
	var evs []index.Event
	for i := range 23 {
		evs = append(evs, index.Event{Time: t0.Add(time.Duration(i/3) * time.Second), Type: []string{index.EventCanary, index.EventFallback}[i%2],
			Detail: fmt.Sprint(i)})
	}
	if err := x.AddEvents(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	for _, q := range []index.EventQuery{{}, {Type: index.EventFallback}} {
		all, err := x.Events(ctx, index.EventQuery{Type: q.Type, Limit: index.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		var paged []index.Event
		q.Limit = 4
		for range 20 {
			page, err := x.Events(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, page...)
			if len(page) < 4 {
				break
			}
			q.Before = page[len(page)-1].ID
		}
		if len(all) < 11 || !slices.Equal(paged, all) {
			t.Errorf("type %q: pages joined = %d events, want the %d of one query in the same order", q.Type, len(paged), len(all))
		}
	}
	if _, err := x.Events(ctx, index.EventQuery{Before: 1 << 40}); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("unknown cursor: err = %v, want ErrNotFound", err)
	}
}
