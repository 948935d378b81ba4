package recorder

import (
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// TestEventsOfAnEvalRun: the leaf of an evaluation run becomes one eval
// event naming the run's outcome and the path it ran on.
func TestEventsOfAnEvalRun(t *testing.T) {
	tx := &custody.Transaction{ID: "r1", Endpoint: custody.EndpointEval, Decision: "failed",
		Provider: "primary", ResponseModel: "big", Fingerprint: "fp_2",
		Outcomes: []custody.Outcome{{Check: "eval", Status: custody.StatusFlagged, Detail: "suite=s passed=0/1 failing=recall"}}}
	evs := eventsOf([]index.Record{{Transaction: *tx}})
	if len(evs) != 1 || evs[0].Type != index.EventEval || !strings.HasPrefix(evs[0].Detail, "failed suite=s ") ||
		!strings.HasSuffix(evs[0].Detail, "path=primary|big|fp_2") {
		t.Errorf("the eval event: %+v", evs)
	}
	tx.Endpoint = "chat"
	if evs := eventsOf([]index.Record{{Transaction: *tx}}); len(evs) != 0 {
		t.Errorf("a chat transaction gave events %+v", evs)
	}
}
