package console

import (
	"cmp"
	"context"
	"fmt"
	"github.com/custody-gateway/custody/adminapi"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/custody-gateway/custody"
)

// buckets is the number of time slices of the overview's charts.
const buckets = 24

// recentRows is how many of the latest rejected and flagged client
// transactions the overview lists.
const recentRows = 10

// overviewData is the overview page: is anything wrong right now? Per
// configured model and route, client traffic and canary probes apart, a
// route out of service said so, the log's state, and the latest
// rejections.
type overviewData struct {
	Since, Until  time.Time
	Window        string
	Windows       []window
	Client        counts // client transactions of configured models
	Probes        counts // canary probes' transactions
	Evals         counts // evaluation suites' transactions (cases and runs)
	Unconfigured  int64  // requests for model names that are not configured (each a 400)
	Models        []*modelCard
	OutOfService  []*routeCard
	Log           *adminapi.LogStatus
	CheckpointAge string
	Recent        []adminapi.Record
}

type window struct {
	Name string
	D    time.Duration
}

// windows are the spans the overview offers.
var windows = []window{{"15m", 15 * time.Minute}, {"1h", time.Hour}, {"6h", 6 * time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

// counts are verdict counts of some transactions.
type counts struct {
	Total, Verified, Flagged, Rejected, Fallbacks int64
}

func (c *counts) add(verdict custody.Verdict, fallback bool, n int64) {
	c.Total += n
	switch verdict {
	case custody.Verified:
		c.Verified += n
	case custody.Flagged:
		c.Flagged += n
	case custody.Rejected:
		c.Rejected += n
	}
	if fallback {
		c.Fallbacks += n
	}
}

// Failed is what a probe count shows: probes that did not verify.
func (c counts) Failed() int64 { return c.Flagged + c.Rejected }

type codeCount struct {
	Code  string
	Count int64
}

type modelCard struct {
	Name    string
	Client  counts
	Probes  counts
	Codes   []codeCount // client rejections and flags by code, most first
	Routes  []*routeCard
	Refused counts // client transactions no route served (refused before forwarding, or every route failed)
	Chart   template.HTML
	Mix     template.HTML
	Legend  []legendEntry
	Evals   []*evalPanel // routes with evaluation suites

	codes  map[string]int64
	client []counts
	probes []int64
	mix    []map[string]int64
}

type routeCard struct {
	Label, Provider string
	Index           int
	Client, Probes  counts
	Health          string // green | amber | red; "" before the first canary run
	OutOfService    bool
	Since           *time.Time
	Reason          string
	Checked         time.Time
	Results         []probeLine
}

type probeLine struct {
	Probe, Status, Evidence string
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request) error {
	name, span := "", c.cfg.Window
	if v := r.URL.Query().Get("window"); v != "" {
		i := slices.IndexFunc(windows, func(w window) bool { return w.Name == v })
		if i < 0 {
			return &httpError{status: http.StatusBadRequest, msg: "window must be 15m, 1h, 6h, 24h or 7d"}
		}
		name, span = windows[i].Name, windows[i].D
	}
	until := c.now().UTC()
	since := until.Add(-span)
	d, err := c.overviewOf(r.Context(), since, until)
	if err != nil {
		return err
	}
	d.Window, d.Windows = name, windows
	if name == "" {
		d.Window = span.String()
	}
	return c.render(w, r, http.StatusOK, "overview", d)
}

func (c *Console) overviewOf(ctx context.Context, since, until time.Time) (*overviewData, error) {
	win := url.Values{"since": {since.Format(time.RFC3339Nano)}, "until": {until.Add(time.Nanosecond).Format(time.RFC3339Nano)}}
	var stats adminapi.Stats
	q := url.Values{"buckets": {strconv.Itoa(buckets)}}
	for k, v := range win {
		q[k] = v
	}
	if err := c.call(ctx, adminapi.PathStats, q, &stats); err != nil {
		return nil, fmt.Errorf("reading the stats: %w", err)
	}
	var routes adminapi.CanaryList
	if err := c.call(ctx, adminapi.PathCanaries, nil, &routes); err != nil {
		return nil, fmt.Errorf("reading the canaries: %w", err)
	}
	d := summarize(stats, routes.Data, c.known)
	// Cards in the config's order, which is the operator's.
	slices.SortStableFunc(d.Models, func(a, b *modelCard) int {
		return cmp.Compare(slices.Index(c.cfg.Models, a.Name), slices.Index(c.cfg.Models, b.Name))
	})
	var evals adminapi.EvalStatusList
	if err := c.call(ctx, adminapi.PathEvals, nil, &evals); err != nil {
		return nil, fmt.Errorf("reading the evals: %w", err)
	}
	attachEvals(d, evals.Data)
	var lg adminapi.LogStatus
	if err := c.call(ctx, adminapi.PathLogStatus, nil, &lg); err != nil {
		return nil, fmt.Errorf("reading the log status: %w", err)
	}
	d.Log = &lg
	if lg.Checkpoint != nil {
		d.CheckpointAge = age(time.Duration(lg.Checkpoint.AgeMS * float64(time.Millisecond)))
	}
	for _, v := range []string{"rejected", "flagged"} {
		q := url.Values{"verdict": {v}, "limit": {"100"}, "since": win["since"]}
		var recs adminapi.RecordList
		if err := c.call(ctx, adminapi.PathRecords, q, &recs); err != nil {
			return nil, fmt.Errorf("reading %s records: %w", v, err)
		}
		for _, rec := range recs.Data {
			if !rec.Canary {
				d.Recent = append(d.Recent, rec)
			}
		}
	}
	slices.SortFunc(d.Recent, func(a, b adminapi.Record) int { return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.ID, a.ID)) })
	d.Recent = d.Recent[:min(len(d.Recent), recentRows)]
	return d, nil
}

// known reports whether a requested model name gets a card.
func (c *Console) known(model string) bool {
	return c.cfg.Models == nil || slices.Contains(c.cfg.Models, model)
}

// summarize folds the API's counts and route states per model and route.
// Only models known says yes to get a card; the others' client traffic
// is counted in Unconfigured.
func summarize(stats adminapi.Stats, routes []adminapi.RouteStatus, known func(string) bool) *overviewData {
	d := &overviewData{Since: stats.Since, Until: stats.Until}
	n := max(stats.Buckets, 1)
	models := map[string]*modelCard{}
	get := func(name string) *modelCard {
		m := models[name]
		if m == nil {
			m = &modelCard{Name: name, codes: map[string]int64{}, client: make([]counts, n), probes: make([]int64, n), mix: make([]map[string]int64, n)}
			models[name] = m
		}
		return m
	}
	route := func(m *modelCard, idx int, provider string) *routeCard {
		for _, rc := range m.Routes {
			if rc.Index == idx && rc.Provider == provider {
				return rc
			}
		}
		rc := &routeCard{Label: m.Name + "/" + provider, Provider: provider, Index: idx}
		m.Routes = append(m.Routes, rc)
		return rc
	}
	for _, rt := range routes {
		if !known(rt.Model) {
			continue
		}
		rc := route(get(rt.Model), rt.Index, rt.Provider)
		rc.Label = rt.Route
		if rt.Last != nil {
			rc.Health, rc.Checked = rt.Last.Health, rt.Last.Time
			for _, p := range rt.Last.Results {
				rc.Results = append(rc.Results, probeLine{Probe: p.Probe, Status: p.Status, Evidence: p.Evidence})
			}
		}
		if rt.Quarantined {
			rc.OutOfService, rc.Reason = true, "canaries found the route broken"
			if rt.OutOfService != nil {
				rc.Since, rc.Reason = rt.OutOfService.Since, rt.OutOfService.Reason
			}
			d.OutOfService = append(d.OutOfService, rc)
		}
	}
	for _, row := range stats.Data {
		if row.Eval {
			d.Evals.add(row.Verdict, row.Fallback, row.Count)
			continue
		}
		if !known(row.RequestedModel) {
			if !row.Canary {
				d.Unconfigured += row.Count
			}
			continue
		}
		m := get(row.RequestedModel)
		b := min(max(row.Bucket, 0), n-1)
		if row.Canary {
			m.Probes.add(row.Verdict, row.Fallback, row.Count)
			d.Probes.add(row.Verdict, row.Fallback, row.Count)
			m.probes[b] += row.Count
			if row.Route >= 0 {
				route(m, row.Route, row.Provider).Probes.add(row.Verdict, row.Fallback, row.Count)
			}
			continue
		}
		m.Client.add(row.Verdict, row.Fallback, row.Count)
		d.Client.add(row.Verdict, row.Fallback, row.Count)
		m.client[b].add(row.Verdict, false, row.Count)
		if row.Code != "" {
			m.codes[string(row.Code)] += row.Count
		}
		if row.Route >= 0 && row.Provider != "" {
			route(m, row.Route, row.Provider).Client.add(row.Verdict, row.Fallback, row.Count)
		} else {
			m.Refused.add(row.Verdict, row.Fallback, row.Count)
		}
		if m.mix[b] == nil {
			m.mix[b] = map[string]int64{}
		}
		m.mix[b][cmp.Or(row.ResponseModel, "none")] += row.Count
	}
	width := time.Duration(stats.BucketMS * float64(time.Millisecond))
	for _, m := range models {
		slices.SortFunc(m.Routes, func(a, b *routeCard) int {
			return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.Provider, b.Provider))
		})
		for code, n := range m.codes {
			m.Codes = append(m.Codes, codeCount{code, n})
		}
		slices.SortFunc(m.Codes, func(a, b codeCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code)) })
		m.Chart = trafficChart(m.client, m.probes, stats.Since, width)
		m.Mix, m.Legend = mixChart(m.mix, stats.Since, width)
		d.Models = append(d.Models, m)
	}
	slices.SortFunc(d.Models, func(a, b *modelCard) int { return cmp.Compare(a.Name, b.Name) })
	return d
}

// age says a duration the way an on-call reads it.
func age(d time.Duration) string {
	switch {
	case d < time.Second:
		return "under a second"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
