package index

import (
	"fmt"
	"slices"
	"time"

	"github.com/custody-gateway/custody"
)

// What a Breakdown groups by.
const (
	ByTenant = "tenant" // the tenant id
	ByCode   = "code"   // each code of Transaction.Codes: a record with two codes counts under both
	ByRoute  = "route"  // requested model "/" serving provider (provider empty when none served)
	ByModel  = "model"  // the requested (client-facing) model
)

// Breakdowns are the groupings Breakdown accepts, in the order a page
// shows them.
var Breakdowns = []string{ByTenant, ByCode, ByRoute, ByModel}

// BreakdownQuery selects the records a Breakdown counts: Since <= Time <
// Until, grouped by By.
type BreakdownQuery struct {
	By           string    // one of Breakdowns
	Since, Until time.Time // both required, Until after Since
}

// Validate reports whether q can be run.
func (q *BreakdownQuery) Validate() error {
	if !slices.Contains(Breakdowns, q.By) {
		return fmt.Errorf("index: breakdown by %q: want one of %v: %w", q.By, Breakdowns, custody.ErrInvalidRequest)
	}
	if q.Since.IsZero() || !q.Until.After(q.Since) {
		return fmt.Errorf("index: breakdown needs Since < Until: %w", custody.ErrInvalidRequest)
	}
	return nil
}

// BreakdownRow counts the records of one key that agree on verdict,
// canary and eval. Keys are as stored (see Column); rows come ordered by
// key, verdict, canary, eval.
type BreakdownRow struct {
	Key     string          `json:"key"`
	Verdict custody.Verdict `json:"verdict"`
	Canary  bool            `json:"canary"` // synthetic traffic: a canary probe's or an eval's
	Eval    bool            `json:"eval"`   // an eval's (Canary too): sender eval
	Count   int64           `json:"count"`
}
