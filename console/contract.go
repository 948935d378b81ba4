package console

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/custody-gateway/custody/adminapi"
)

// contractBuckets is how many columns of time the contract page shows.
const contractBuckets = 12

// contractData is the contract page: each route's contract pass rate
// over the window, overall and by clause, per time bucket (issue 30: a
// vendor verifier that runs on real traffic).
type contractData struct {
	Window       string
	Windows      []window
	Since, Until time.Time
	Starts       []time.Time // each bucket's start
	Truncated    bool
	Routes       []contractRoute
}

type contractRoute struct {
	Route           string
	Checked, Passed int
	Rate            string           // overall, "97.5%"
	Cells           []contractCell   // the pass rate per bucket
	Clauses         []contractClause // one row a broken clause, most broken first
}

// contractCell is one bucket of a row: the rate of answers that kept the
// row's clause (all of them, for the route's own row), "—" when none was
// judged.
type contractCell struct {
	Rate    string
	Checked int
	Broken  int // answers of the bucket that broke it
}

type contractClause struct {
	Code   string
	Broken int // over the window
	Rate   string
	Cells  []contractCell
}

func (c *Console) contract(w http.ResponseWriter, r *http.Request) error {
	d := contractData{Window: cmp.Or(r.URL.Query().Get("window"), "24h"), Windows: windows}
	i := slices.IndexFunc(windows, func(w window) bool { return w.Name == d.Window })
	if i < 0 {
		return &httpError{status: http.StatusBadRequest, msg: "window must be 15m, 1h, 6h, 24h or 7d"}
	}
	d.Until = c.now().UTC()
	d.Since = d.Until.Add(-windows[i].D)
	var ans adminapi.Contract
	api := url.Values{"buckets": {fmt.Sprint(contractBuckets)}, "since": {d.Since.Format(time.RFC3339Nano)},
		"until": {d.Until.Add(time.Nanosecond).Format(time.RFC3339Nano)}}
	if err := c.call(r.Context(), adminapi.PathContract, api, &ans); err != nil {
		return err
	}
	d.Truncated = ans.Truncated
	width := time.Duration(ans.BucketMS * float64(time.Millisecond))
	for b := range ans.Buckets {
		d.Starts = append(d.Starts, ans.Since.Add(time.Duration(b)*width))
	}
	for _, rt := range ans.Data {
		row := contractRoute{Route: rt.Route, Checked: rt.Checked, Passed: rt.Passed, Rate: rate(rt.Passed, rt.Checked)}
		for _, b := range rt.Series {
			row.Cells = append(row.Cells, contractCell{Rate: rate(b.Passed, b.Checked), Checked: b.Checked, Broken: b.Checked - b.Passed})
		}
		for code, n := range rt.Broken {
			cl := contractClause{Code: string(code), Broken: n, Rate: rate(rt.Checked-n, rt.Checked)}
			for _, b := range rt.Series {
				k := b.Broken[code]
				cl.Cells = append(cl.Cells, contractCell{Rate: rate(b.Checked-k, b.Checked), Checked: b.Checked, Broken: k})
			}
			row.Clauses = append(row.Clauses, cl)
		}
		slices.SortFunc(row.Clauses, func(a, b contractClause) int {
			return cmp.Or(b.Broken-a.Broken, cmp.Compare(a.Code, b.Code))
		})
		d.Routes = append(d.Routes, row)
	}
	return c.render(w, r, http.StatusOK, "contract", d)
}

// rate is passed/of as a percentage with one decimal, "—" of none.
func rate(passed, of int) string {
	if of == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(passed)/float64(of))
}
