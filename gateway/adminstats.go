package gateway

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/canary"
	"github.com/custody-gateway/custody/index"
)

// The admin API's window defaults: the last day, in 24 buckets.
const (
	defaultWindow  = 24 * time.Hour
	defaultBuckets = 24
)

// window reads since and until (RFC 3339 or Unix seconds): until defaults
// to now, since to a day before until.
func (g *Gateway) window(r *http.Request) (since, until time.Time, err error) {
	q := r.URL.Query()
	if until, err = timeParam(q.Get("until"), "until"); err != nil {
		return
	}
	if until.IsZero() {
		until = g.now()
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

// stats answers GET /v1/custody/stats: the window's records counted per
// time bucket, requested model, route, verdict, code, fallback and canary.
func (e *Evidence) stats(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	since, until, err := g.window(r)
	if err != nil {
		return err
	}
	n, err := intParam(r.URL.Query().Get("buckets"), "buckets")
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
	rows, err := e.Index.Stats(r.Context(), q)
	if err != nil {
		return indexDown(err)
	}
	// StatsRow is the API's row, with its bucket's start time.
	type row struct {
		index.StatsRow
		Start time.Time `json:"start"`
	}
	width := time.Duration(q.Width())
	out := make([]row, len(rows))
	for i, s := range rows {
		out[i] = row{StatsRow: s, Start: since.Add(time.Duration(s.Bucket) * width)}
	}
	return writeJSON(w, map[string]any{"object": "stats", "since": since, "until": until, "buckets": n,
		"bucket_ms": ms(width), "data": out})
}

// breakdown answers GET /v1/custody/breakdown?by=tenant|code|route|model:
// the window's records per key, verdict and canary.
func (e *Evidence) breakdown(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	since, until, err := g.window(r)
	if err != nil {
		return err
	}
	q := index.BreakdownQuery{By: r.URL.Query().Get("by"), Since: since, Until: until}
	if err := q.Validate(); err != nil {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "by", Message: "by must be tenant, code, route or model"}
	}
	rows, err := e.Index.Breakdown(r.Context(), q)
	if err != nil {
		return indexDown(err)
	}
	if rows == nil {
		rows = []index.BreakdownRow{}
	}
	return writeJSON(w, map[string]any{"object": "breakdown", "by": q.By, "since": since, "until": until, "data": rows})
}

// canaries answers GET /v1/custody/canaries with the index at hand: a
// quarantined route says since when and why, from the timeline.
func (e *Evidence) canaries(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"object": "list", "data": g.routeStatuses(r.Context(), e.Index)})
}

// routeStatus is one route in GET /v1/custody/canaries.
type routeStatus struct {
	Route       string `json:"route"` // "model/provider"
	Model       string `json:"model"`
	Provider    string `json:"provider"`
	Index       int    `json:"index"`
	Quarantined bool   `json:"quarantined"`
	// OutOfService is set while the route is quarantined: since when
	// (the quarantine event) and why (its failing probes and evidence).
	OutOfService *outOfService `json:"out_of_service"`
	Last         *runJSON      `json:"last"` // null before the first run
}

type outOfService struct {
	Since  *time.Time `json:"since"` // null when the timeline does not hold the event
	Reason string     `json:"reason"`
}

type runJSON struct {
	Time    time.Time   `json:"time"`
	Health  string      `json:"health"` // green | amber | red
	OK      bool        `json:"ok"`
	Results []probeJSON `json:"results"`
}

type probeJSON struct {
	Probe      string  `json:"probe"`
	Status     string  `json:"status"` // ok | failed | skipped | inconclusive
	Evidence   string  `json:"evidence"`
	Code       string  `json:"code"`
	DurationMS float64 `json:"duration_ms"`
}

// routeStatuses is every route's canary state; idx, when set, supplies
// since-when and why of a quarantine.
func (g *Gateway) routeStatuses(ctx context.Context, idx index.Index) []routeStatus {
	last := map[string]canary.Report{}
	if g.canaries != nil {
		for _, rep := range g.canaries.Last() {
			last[rep.Name] = rep
		}
	}
	out := []routeStatus{}
	for _, rt := range g.CanaryRoutes() {
		name := rt.Target.Name()
		st := routeStatus{Route: name, Model: rt.Model, Provider: strings.TrimPrefix(name, rt.Model+"/"), Index: rt.Index,
			Quarantined: g.health != nil && g.health.Quarantined(rt.Model, rt.Index)}
		if rep, ok := last[name]; ok {
			run := &runJSON{Time: rep.Time.UTC(), Health: string(rep.Health), OK: rep.OK(), Results: []probeJSON{}}
			for _, p := range rep.Results {
				run.Results = append(run.Results, probeJSON{Probe: p.Probe, Status: string(p.Outcome()), Evidence: p.Evidence,
					Code: p.Code, DurationMS: ms(p.Duration)})
			}
			st.Last = run
		}
		if st.Quarantined {
			st.OutOfService = quarantineOf(ctx, idx, name, st.Last)
		}
		out = append(out, st)
	}
	return out
}

// quarantineOf finds the event that took route out of service and the
// failure beside it (the runner emits both for one run); without them,
// the reason is the last run's failing probes.
func quarantineOf(ctx context.Context, idx index.Index, route string, last *runJSON) *outOfService {
	if idx != nil {
		evs, err := idx.Events(ctx, index.EventQuery{Type: index.EventCanary, Route: route, Limit: 50})
		for i := 0; err == nil && i < len(evs); i++ {
			streak, ok := strings.CutPrefix(evs[i].Detail, string(canary.EventQuarantined)+": ")
			if !ok {
				continue
			}
			t := evs[i].Time.UTC()
			oos := &outOfService{Since: &t, Reason: streak}
			for _, f := range evs[i:] {
				if why, ok := strings.CutPrefix(f.Detail, string(canary.EventFailure)+": "); ok && f.Time.Equal(evs[i].Time) {
					oos.Reason = why + " (" + streak + ")"
					break
				}
			}
			return oos
		}
	}
	oos := &outOfService{Reason: "canaries found the route broken"}
	if last != nil {
		var failed []string
		for _, p := range last.Results {
			if p.Status == string(canary.StatusFailed) {
				failed = append(failed, p.Probe+": "+p.Evidence)
			}
		}
		if len(failed) > 0 {
			oos.Reason = strings.Join(failed, "; ")
		}
	}
	return oos
}

// canaryEventJSON is a canary event as the admin API shows it.
func canaryEventJSON(e canary.Event) map[string]any {
	return map[string]any{"time": e.Time.UTC(), "kind": string(e.Kind), "model": e.Model, "route": e.Name,
		"route_index": e.Route, "probe": e.Probe, "detail": e.Detail}
}
