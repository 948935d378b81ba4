package adminapi

import (
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// stats answers GET /v1/custody/stats: the window's records counted per
// time bucket, requested model, route, verdict, code, fallback and canary.
func (a *API) stats(c *call) error {
	since, until, err := a.window(c)
	if err != nil {
		return err
	}
	n, err := intParam(c.r.URL.Query().Get("buckets"), "buckets")
	if err != nil {
		return err
	}
	if n == 0 {
		n = defaultBuckets
	}
	if n > index.MaxBuckets {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "buckets", Message: "buckets must be at most 1000"}
	}
	q := index.StatsQuery{Since: since, Until: until, Buckets: n}
	rows, err := a.cfg.Index.Stats(c.r.Context(), q)
	if err != nil {
		return indexDown(err)
	}
	width := time.Duration(q.Width())
	out := Stats{Object: "stats", Since: since, Until: until, Buckets: n, BucketMS: ms(width), Data: make([]StatsRow, len(rows))}
	for i, s := range rows {
		out.Data[i] = StatsRow{StatsRow: s, Start: since.Add(time.Duration(s.Bucket) * width)}
	}
	return c.json(out)
}

// breakdown answers GET /v1/custody/breakdown?by=tenant|code|route|model:
// the window's records per key, verdict and canary.
func (a *API) breakdown(c *call) error {
	since, until, err := a.window(c)
	if err != nil {
		return err
	}
	q := index.BreakdownQuery{By: c.r.URL.Query().Get("by"), Since: since, Until: until}
	if err := q.Validate(); err != nil {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "by", Message: "by must be tenant, code, route or model"}
	}
	rows, err := a.cfg.Index.Breakdown(c.r.Context(), q)
	if err != nil {
		return indexDown(err)
	}
	if rows == nil {
		rows = []index.BreakdownRow{}
	}
	return c.json(Breakdown{Object: "breakdown", By: q.By, Since: since, Until: until, Data: rows})
}
