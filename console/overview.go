package console

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// buckets is the number of time slices of the overview's charts.
const buckets = 24

// overviewData is the overview page: per requested model, its verdicts,
// fallbacks and routes over the window, and the mix of effective models.
type overviewData struct {
	Since, Until time.Time
	Window       time.Duration
	Records      int
	Truncated    bool // MaxRecords reached: older records in the window are not counted
	Models       []*modelStats
	Windows      []window
}

type window struct {
	Name string
	D    time.Duration
}

type modelStats struct {
	Name                                      string
	Total, Verified, Flagged, Rejected, Fallb int
	Canary                                    int
	Routes                                    []*routeStats
	Health                                    []RouteHealth
	Verdicts, Mix                             template.HTML
	Legend                                    []legendEntry

	routes map[routeKey]*routeStats
	mix    [buckets]map[string]int
}

type routeKey struct {
	route    int
	provider string
}

type routeStats struct {
	Route                                     int
	Provider                                  string
	Total, Verified, Flagged, Rejected, Fallb int
}

// records reads the window's records, newest first, at most MaxRecords.
func (c *Console) records(ctx context.Context, since, until time.Time) ([]index.Record, bool, error) {
	var all []index.Record
	q := index.Query{Since: since, Until: until, Limit: index.MaxLimit}
	for len(all) < c.cfg.MaxRecords {
		q.Limit = min(index.MaxLimit, c.cfg.MaxRecords-len(all))
		page, err := c.cfg.Index.Search(ctx, q)
		if err != nil {
			return nil, false, fmt.Errorf("searching the index: %w", err)
		}
		all = append(all, page...)
		if len(page) < q.Limit {
			return all, false, nil
		}
		q.Before = page[len(page)-1].ID
	}
	return all, true, nil
}

// windows are the spans the overview offers besides the configured one.
var windows = []window{{"1h", time.Hour}, {"6h", 6 * time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

func (c *Console) overview(w http.ResponseWriter, r *http.Request) error {
	span := c.cfg.Window
	if v := r.URL.Query().Get("window"); v != "" {
		i := slices.IndexFunc(windows, func(w window) bool { return w.Name == v })
		if i < 0 {
			return &httpError{status: http.StatusBadRequest, msg: "window must be 1h, 6h, 24h or 7d"}
		}
		span = windows[i].D
	}
	until := c.now()
	since := until.Add(-span)
	recs, truncated, err := c.records(r.Context(), since, until.Add(time.Second))
	if err != nil {
		return err
	}
	var health []RouteHealth
	if c.cfg.Health != nil {
		health = c.cfg.Health()
	}
	d := summarize(recs, health, since, until, truncated)
	d.Windows = windows
	return c.render(w, r, http.StatusOK, "overview", d)
}

// summarize aggregates records (and canary health) per model and route.
func summarize(recs []index.Record, health []RouteHealth, since, until time.Time, truncated bool) *overviewData {
	d := &overviewData{Since: since.UTC(), Until: until.UTC(), Window: until.Sub(since), Records: len(recs), Truncated: truncated}
	models := map[string]*modelStats{}
	get := func(name string) *modelStats {
		m := models[name]
		if m == nil {
			m = &modelStats{Name: name, routes: map[routeKey]*routeStats{}}
			models[name] = m
		}
		return m
	}
	width := until.Sub(since) / buckets
	for i := range recs {
		tx := &recs[i].Transaction
		m := get(tx.RequestedModel)
		rk := routeKey{tx.Route, tx.Provider}
		rs := m.routes[rk]
		if rs == nil {
			rs = &routeStats{Route: tx.Route, Provider: tx.Provider}
			m.routes[rk] = rs
		}
		fallback := len(tx.FallbackChain) > 1 && tx.Status == http.StatusOK
		count(&m.Total, &m.Verified, &m.Flagged, &m.Rejected, &m.Fallb, tx.Verdict, fallback)
		count(&rs.Total, &rs.Verified, &rs.Flagged, &rs.Rejected, &rs.Fallb, tx.Verdict, fallback)
		if tx.Canary {
			m.Canary++
		}
		if width > 0 {
			b := int(tx.Time.Sub(since) / width)
			if b >= 0 && b < buckets {
				if m.mix[b] == nil {
					m.mix[b] = map[string]int{}
				}
				m.mix[b][effectiveModel(tx)]++
			}
		}
	}
	for _, h := range health {
		m := get(h.Model)
		m.Health = append(m.Health, h)
	}
	for _, m := range models {
		for _, rs := range m.routes {
			m.Routes = append(m.Routes, rs)
		}
		slices.SortFunc(m.Routes, func(a, b *routeStats) int {
			return cmp.Or(cmp.Compare(a.Route, b.Route), cmp.Compare(a.Provider, b.Provider))
		})
		slices.SortFunc(m.Health, func(a, b RouteHealth) int {
			return cmp.Or(cmp.Compare(a.Route, b.Route), cmp.Compare(a.Probe, b.Probe))
		})
		m.Verdicts = verdictBar(m.Verified, m.Flagged, m.Rejected)
		m.Mix, m.Legend = mixChart(m.mix[:], since, width)
		d.Models = append(d.Models, m)
	}
	slices.SortFunc(d.Models, func(a, b *modelStats) int { return cmp.Compare(a.Name, b.Name) })
	return d
}

func count(total, verified, flagged, rejected, fallbacks *int, v custody.Verdict, fallback bool) {
	*total++
	switch v {
	case custody.Verified:
		*verified++
	case custody.Flagged:
		*flagged++
	case custody.Rejected:
		*rejected++
	}
	if fallback {
		*fallbacks++
	}
}

// effectiveModel is the model that answered: what the upstream reported,
// else what custody asked it for, else "none" (rejected before any
// upstream answered).
func effectiveModel(tx *custody.Transaction) string {
	switch {
	case tx.ResponseModel != "":
		return tx.ResponseModel
	case tx.UpstreamModel != "" && tx.Status == http.StatusOK:
		return tx.UpstreamModel
	}
	return "none"
}
