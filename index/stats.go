package index

import (
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
)

// MaxBuckets bounds StatsQuery.Buckets.
const MaxBuckets = 1000

// StatsQuery selects the records Stats counts: those with Since <= Time <
// Until, in Buckets equal slices of that span.
type StatsQuery struct {
	Since, Until time.Time // both required, Until after Since
	Buckets      int       // 0 means 1; at most MaxBuckets
}

// Width is the span of one bucket (rounded up to the nanosecond, so that
// the last record before Until falls in bucket Buckets-1).
func (q *StatsQuery) Width() int64 {
	n := int64(max(q.Buckets, 1))
	span := q.Until.UnixNano() - q.Since.UnixNano()
	return (span + n - 1) / n
}

// Validate reports whether q can be run.
func (q *StatsQuery) Validate() error {
	if q.Since.IsZero() || !q.Until.After(q.Since) || q.Buckets < 0 || q.Buckets > MaxBuckets {
		return fmt.Errorf("index: stats needs Since < Until and 0..%d buckets: %w", MaxBuckets, custody.ErrInvalidRequest)
	}
	return nil
}

// StatsRow counts the records of one bucket that agree on every other
// field. Strings are as stored (see Column).
type StatsRow struct {
	Bucket         int             `json:"bucket"` // 0 is the oldest slice
	RequestedModel string          `json:"requested_model"`
	Route          int             `json:"route"`          // the route that served; -1 when none did
	Provider       string          `json:"provider"`       // the provider that served; "" when none did
	ResponseModel  string          `json:"response_model"` // the model the upstream reported; "" when none answered
	Verdict        custody.Verdict `json:"verdict"`
	Code           custody.Code    `json:"code"`     // the rejecting (or first flagged) code; "" for a clean record
	Fallback       bool            `json:"fallback"` // served (status 200) by a route after the first tried
	Canary         bool            `json:"canary"`   // synthetic traffic: a canary probe's or an eval's
	Eval           bool            `json:"eval"`     // an eval's (Canary too): sender eval
	Count          int64           `json:"count"`
}
