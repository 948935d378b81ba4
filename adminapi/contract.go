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
// verifier that runs on real traffic (issue 30).
type Contract struct {
	Object    string         `json:"object"` // "contract"
	Since     time.Time      `json:"since"`
	Until     time.Time      `json:"until"`
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
}

// contract answers GET /v1/custody/contract?since=&until=: per route,
// how many answers the contract check held and how many passed, and the
// broken ones by code (one code per clause).
func (a *API) contract(c *call) error {
	since, until, err := a.window(c)
	if err != nil {
		return err
	}
	rates := map[string]*ContractRate{}
	q := index.Query{Since: since, Until: until, Limit: index.MaxLimit}
	out := Contract{Object: "contract", Since: since, Until: until, Data: []ContractRate{}}
	for out.Records < maxContractRecords {
		page, err := a.cfg.Index.Search(c.r.Context(), q)
		if err != nil {
			return indexDown(err)
		}
		for i := range page {
			tallyContract(rates, &page[i].Transaction)
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

// tallyContract adds a transaction's contract outcome to its route's rate.
func tallyContract(rates map[string]*ContractRate, tx *custody.Transaction) {
	for _, o := range tx.Outcomes {
		if o.Check != custody.CheckContract || o.Status == custody.StatusSkipped {
			continue
		}
		route := tx.RequestedModel + "/" + tx.Provider
		r := rates[route]
		if r == nil {
			r = &ContractRate{Route: route, Broken: map[custody.Code]int{}}
			rates[route] = r
		}
		r.Checked++
		if o.Status == custody.StatusOK {
			r.Passed++
		} else {
			r.Broken[o.Code]++
		}
		return
	}
}
