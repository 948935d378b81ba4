package recorder

import (
	"slices"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// TestEventsOf: the timeline events a batch of records makes, by the
// index's event types: an integrity failure is a violation (a refusal of
// policy or transport is not), a fallback chain a fallback, a new tuple a
// path change, an admin's re-enrollment a canary event.
func TestEventsOf(t *testing.T) {
	rec := func(tx custody.Transaction) index.Record { return index.Record{Transaction: tx} }
	violation := custody.Transaction{ID: "v"}
	violation.Fail(custody.CheckModel, custody.CodeModelMismatch, "")
	refused := custody.Transaction{ID: "r"}
	refused.Fail(custody.CheckRoute, custody.CodeFallbackNotPermitted, "")
	ledgerDown := custody.Transaction{ID: "l"}
	ledgerDown.Fail(custody.CheckLedger, custody.CodeLedgerUnavailable, "")
	evs := eventsOf([]index.Record{
		rec(violation), rec(refused), rec(ledgerDown),
		rec(custody.Transaction{ID: "f", FallbackChain: []string{"a", "b"}}),
		rec(custody.Transaction{ID: "p", PathChange: true, Provider: "a", ResponseModel: "m", Fingerprint: "fp"}),
		rec(custody.Transaction{ID: "e", Endpoint: custody.EndpointReenroll}),
		rec(custody.Transaction{ID: "ok"}),
	})
	var got []string
	for _, e := range evs {
		got = append(got, e.RequestID+":"+e.Type+":"+e.Detail)
	}
	want := []string{"v:" + index.EventViolation + ":rejected", "f:" + index.EventFallback + ":a>b",
		"p:" + index.EventPathChange + ":a|m|fp", "e:" + index.EventCanary + ":reenrolled by an admin"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
