package console

import (
	"cmp"
	"github.com/custody-gateway/custody/adminapi"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/custody-gateway/custody/index"
)

// breakdownData is the breakdowns page: the window's client traffic,
// canary probes and evals per tenant, code, route or model.
type breakdownData struct {
	By, Window   string
	Bys          []string
	Windows      []window
	Since, Until time.Time
	Rows         []*breakdownRow
}

type breakdownRow struct {
	Key    string
	Client counts
	Probes counts // canary probes'
	Evals  counts // evaluation suites'
}

func (c *Console) breakdowns(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	d := breakdownData{By: cmp.Or(q.Get("by"), index.ByCode), Window: cmp.Or(q.Get("window"), "24h"), Bys: index.Breakdowns, Windows: windows}
	i := slices.IndexFunc(windows, func(w window) bool { return w.Name == d.Window })
	if i < 0 {
		return &httpError{status: http.StatusBadRequest, msg: "window must be 15m, 1h, 6h, 24h or 7d"}
	}
	if !slices.Contains(index.Breakdowns, d.By) {
		return &httpError{status: http.StatusBadRequest, msg: "by must be tenant, code, route or model"}
	}
	d.Until = c.now().UTC()
	d.Since = d.Until.Add(-windows[i].D)
	var ans adminapi.Breakdown
	api := url.Values{"by": {d.By}, "since": {d.Since.Format(time.RFC3339Nano)}, "until": {d.Until.Add(time.Nanosecond).Format(time.RFC3339Nano)}}
	if err := c.call(r.Context(), adminapi.PathBreakdown, api, &ans); err != nil {
		return err
	}
	rows := map[string]*breakdownRow{}
	for _, a := range ans.Data {
		row := rows[a.Key]
		if row == nil {
			row = &breakdownRow{Key: a.Key}
			rows[a.Key] = row
			d.Rows = append(d.Rows, row)
		}
		switch {
		case a.Eval:
			row.Evals.add(a.Verdict, false, a.Count)
		case a.Canary:
			row.Probes.add(a.Verdict, false, a.Count)
		default:
			row.Client.add(a.Verdict, false, a.Count)
		}
	}
	slices.SortFunc(d.Rows, func(a, b *breakdownRow) int {
		return cmp.Or(cmp.Compare(b.Client.Total, a.Client.Total), cmp.Compare(b.Probes.Total, a.Probes.Total), cmp.Compare(b.Evals.Total, a.Evals.Total), cmp.Compare(a.Key, b.Key))
	})
	return c.render(w, r, http.StatusOK, "breakdowns", d)
}
