package adminapi

import (
	"strconv"
	"time"

	"github.com/custody-gateway/custody"
)

// The admin API's window defaults: the last day, in 24 buckets.
const (
	defaultWindow  = 24 * time.Hour
	defaultBuckets = 24
)

// indexDown is the answer when the index does not answer: 503
// index_unavailable with a reason; the cause goes to the operator's log.
func indexDown(err error) error {
	return custody.Wrap(custody.CodeIndexUnavailable, err, "the index is unavailable, so this cannot be looked up now; retry later")
}

// timeParam accepts RFC 3339 or Unix seconds.
func timeParam(v, name string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, &custody.Error{Code: custody.CodeInvalidRequest, Param: name, Message: name + " must be RFC 3339 or Unix seconds"}
}

func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, &custody.Error{Code: custody.CodeInvalidRequest, Param: name, Message: name + " must be a non-negative integer"}
	}
	return n, nil
}

// window reads since and until (RFC 3339 or Unix seconds): until defaults
// to now, since to a day before until.
func (a *API) window(c *call) (since, until time.Time, err error) {
	q := c.r.URL.Query()
	if until, err = timeParam(q.Get("until"), "until"); err != nil {
		return
	}
	if until.IsZero() {
		until = a.cfg.Now()
	}
	if since, err = timeParam(q.Get("since"), "since"); err != nil {
		return
	}
	if since.IsZero() {
		since = until.Add(-defaultWindow)
	}
	if !until.After(since) {
		err = &custody.Error{Code: custody.CodeInvalidRequest, Param: "since", Message: "since must be before until"}
	}
	return since.UTC(), until.UTC(), err
}

// ms is d in milliseconds, the admin API's unit of durations.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
