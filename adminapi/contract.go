package adminapi

import (
	"slices"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// maxContractRecords bounds the records one GET /v1/custody/contract
// reads (the newest of the window); past it the answer says truncated.
const maxContractRecords = 20 * index.MaxLimit

// Contract is each route's contract pass rate over a window: a vendor
// verifier that runs on real traffic (issue 30); with buckets=, its
// course over the window too.
type Contract struct {
	Object   string    `json:"object"` // "contract"
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
	Buckets  int       `json:"buckets"`   // of each route's series; 0: none asked
	BucketMS float64   `json:"bucket_ms"` // the width of one

	Records   int            `json:"records"`   // records read
	Truncated bool           `json:"truncated"` // the window held more than were read
	Data      []ContractRate `json:"data"`
}

// ContractRate is one route's answers held to their contract.
type ContractRate struct {
	Route    string  `json:"route"`   // model/provider
	Checked  int     `json:"checked"` // answers the contract check ran on
	Passed   int     `json:"passed"`
	PassRate float64 `json:"pass_rate"` // passed / checked
	// Broken counts the answers by the code of their broken clause
	// (contract_tool_unknown, ...).
	Broken map[custody.Code]int `json:"broken"`
	// Series is the same, per time bucket of the window, oldest first
	// (every bucket, empty ones included); empty unless buckets= asked.
	Series []ContractBucket `json:"series"`
}

// ContractBucket is a route's answers held to their contract in one time
// bucket of the window.
type ContractBucket struct {
	Start    time.Time            `json:"start"`
	Checked  int                  `json:"checked"`
	Passed   int                  `json:"passed"`
	PassRate float64              `json:"pass_rate"` // passed / checked; 0 when none was checked
	Broken   map[custody.Code]int `json:"broken"`
}

// contract answers GET /v1/custody/contract?since=&until=&buckets=: per
// route, how many answers the contract check held and how many passed,
// and the broken ones by code (one code per clause); with buckets, the
// same per time bucket (the pass rate by clause over time).
func (a *API) contract(c *call) error {
	since, until, err := a.window(c)
	if err != nil {
		return err
	}
	n, err := intParam(c.r.URL.Query().Get("buckets"), "buckets")
	if err != nil {
		return err
	}
	if n > index.MaxBuckets {
		return &custody.Error{Code: custody.CodeInvalidRequest, Param: "buckets", Message: "buckets must be at most 1000"}
	}
	rates := map[string]*ContractRate{}
	q := index.Query{Since: since, Until: until, Limit: index.MaxLimit}
	out := Contract{Object: "contract", Since: since, Until: until, Buckets: n, Data: []ContractRate{}}
	var width time.Duration
	if n > 0 {
		width = until.Sub(since) / time.Duration(n)
		width = max(width, 1)
		out.BucketMS = ms(width)
	}
	for out.Records < maxContractRecords {
		page, err := a.cfg.Index.Search(c.r.Context(), q)
		if err != nil {
			return indexDown(err)
		}
		for i := range page {
			tallyContract(rates, &page[i].Transaction, since, width, n)
		}
		out.Records += len(page)
		if len(page) < q.PageSize() {
			break
		}
		q.Before = page[len(page)-1].ID
		if out.Records >= maxContractRecords {
			out.Truncated = true
		}
	}
	for _, r := range rates {
		if r.Checked > 0 {
			r.PassRate = float64(r.Passed) / float64(r.Checked)
		}
		for i := range r.Series {
			b := &r.Series[i]
			b.Start = since.Add(time.Duration(i) * width)
			if b.Checked > 0 {
				b.PassRate = float64(b.Passed) / float64(b.Checked)
			}
		}
		out.Data = append(out.Data, *r)
	}
	slices.SortFunc(out.Data, func(x, y ContractRate) int {
		if x.Route < y.Route {
			return -1
		}
		if x.Route > y.Route {
			return 1
		}
		return 0
	})
	return c.json(out)
}

// tallyContract adds a transaction's contract outcome to its route's
// rate, and to its bucket of n (each width wide from since) when n > 0.
func tallyContract(rates map[string]*ContractRate, tx *custody.Transaction, since time.Time, width time.Duration, n int) {
	for _, o := range tx.Outcomes {
		if o.Check != custody.CheckContract || o.Status == custody.StatusSkipped {
			continue
		}
		route := tx.RequestedModel + "/" + tx.Provider
		r := rates[route]
		if r == nil {
			r = &ContractRate{Route: route, Broken: map[custody.Code]int{}, Series: make([]ContractBucket, n)}
			for i := range r.Series {
				r.Series[i].Broken = map[custody.Code]int{}
			}
			rates[route] = r
		}
		r.Checked++
		var b *ContractBucket
		if n > 0 {
			i := min(max(int(tx.Time.Sub(since)/width), 0), n-1)
			b = &r.Series[i]
			b.Checked++
		}
		if o.Status == custody.StatusOK {
			r.Passed++
			if b != nil {
				b.Passed++
			}
		} else {
			r.Broken[o.Code]++
			if b != nil {
				b.Broken[o.Code]++
			}
		}
		return
	}
}
