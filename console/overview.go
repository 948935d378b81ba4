package console

import (
	"cmp"
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
	Records      int64
	Models       []*modelStats
	// Unconfigured counts the requests for model names that are not
	// configured (each a 400): they get no card, or any tenant could add
	// cards without end by sending made-up names.
	Unconfigured int64
	Windows      []window
}

type window struct {
	Name string
	D    time.Duration
}

type modelStats struct {
	Name                                      string
	Total, Verified, Flagged, Rejected, Fallb int64
	Routes                                    []*routeStats
	Health                                    []RouteHealth
	Verdicts, Mix                             template.HTML
	Legend                                    []legendEntry

	routes map[routeKey]*routeStats
	mix    [buckets]map[string]int64
}

type routeKey struct {
	route    int
	provider string
}

type routeStats struct {
	Route                                     int
	Provider                                  string
	Total, Verified, Flagged, Rejected, Fallb int64
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
	rows, err := c.cfg.Index.Stats(r.Context(), index.StatsQuery{Since: since, Until: until.Add(time.Nanosecond), Buckets: buckets})
	if err != nil {
		return fmt.Errorf("reading the index's stats: %w", err)
	}
	var health []RouteHealth
	if c.cfg.Health != nil {
		health = c.cfg.Health()
	}
	d := summarize(rows, health, since, until, c.known)
	d.Windows = windows
	return c.render(w, r, http.StatusOK, "overview", d)
}

// known reports whether a requested model name gets a card.
func (c *Console) known(model string) bool {
	return c.cfg.Models == nil || slices.Contains(c.cfg.Models, model)
}

// summarize folds the index's counts (and canary health) per model and
// route; rows' buckets are slices of [since, until]. Only models known
// says yes to get a card; the others' rows are counted in Unconfigured.
func summarize(rows []index.StatsRow, health []RouteHealth, since, until time.Time, known func(string) bool) *overviewData {
	d := &overviewData{Since: since.UTC(), Until: until.UTC(), Window: until.Sub(since)}
	models := map[string]*modelStats{}
	get := func(name string) *modelStats {
		m := models[name]
		if m == nil {
			m = &modelStats{Name: name, routes: map[routeKey]*routeStats{}}
			models[name] = m
		}
		return m
	}
	for _, row := range rows {
		if !known(row.RequestedModel) {
			d.Records += row.Count
			d.Unconfigured += row.Count
			continue
		}
		m := get(row.RequestedModel)
		rk := routeKey{row.Route, row.Provider}
		rs := m.routes[rk]
		if rs == nil {
			rs = &routeStats{Route: row.Route, Provider: row.Provider}
			m.routes[rk] = rs
		}
		count(&m.Total, &m.Verified, &m.Flagged, &m.Rejected, &m.Fallb, row)
		count(&rs.Total, &rs.Verified, &rs.Flagged, &rs.Rejected, &rs.Fallb, row)
		d.Records += row.Count
		if row.Bucket >= 0 && row.Bucket < buckets {
			if m.mix[row.Bucket] == nil {
				m.mix[row.Bucket] = map[string]int64{}
			}
			m.mix[row.Bucket][effectiveModel(row)] += row.Count
		}
	}
	for _, h := range health {
		if !known(h.Model) {
			continue
		}
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
		m.Mix, m.Legend = mixChart(m.mix[:], since, until.Sub(since)/buckets)
		d.Models = append(d.Models, m)
	}
	slices.SortFunc(d.Models, func(a, b *modelStats) int { return cmp.Compare(a.Name, b.Name) })
	return d
}

func count(total, verified, flagged, rejected, fallbacks *int64, row index.StatsRow) {
	*total += row.Count
	switch row.Verdict {
	case custody.Verified:
		*verified += row.Count
	case custody.Flagged:
		*flagged += row.Count
	case custody.Rejected:
		*rejected += row.Count
	}
	if row.Fallback {
		*fallbacks += row.Count
	}
}

// effectiveModel is the model that answered, as the upstream reported
// it, or "none" when no upstream answer named one.
func effectiveModel(row index.StatsRow) string {
	if row.ResponseModel != "" {
		return row.ResponseModel
	}
	return "none"
}
